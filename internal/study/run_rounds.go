package study

import (
	"context"
	"fmt"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// Why adaptive rounds stopped, as results.Rounds.Stop says it.
const (
	StopFixed   = "fixed"    // a fixed number of repetitions
	StopNarrow  = "narrow"   // every p50 overhead's interval was narrow enough
	StopMax     = "max"      // the maximum number of rounds ran
	StopNoBasis = "no-basis" // no baseline or no other mesh to have an overhead
)

// runRounds runs the plan's rounds, then, for adaptive repetitions, one
// more round at a time until every mesh's p50 overhead is known to the
// study's precision or the maximum is reached, and records why it stopped.
func (r *runner) runRounds(ctx context.Context, plan *Plan) (*Plan, error) {
	reps := r.s.Repetitions
	rounds := plan.Repetitions
	if err := r.execute(ctx, plan); err != nil {
		return plan, err
	}
	ro := &results.Rounds{Min: reps.Min, Max: reps.Max, CI: reps.CI, Ran: rounds, Stop: StopFixed}
	for reps.Adaptive() {
		stop, why := r.precise(reps.CI)
		ro.Ran = rounds
		if stop != "" {
			ro.Stop = stop
			r.printf("rounds: stopping after %d: %s\n", rounds, why)
			break
		}
		if rounds >= reps.Max {
			ro.Stop = StopMax
			r.printf("rounds: stopping at the maximum, %d: %s\n", rounds, why)
			break
		}
		rounds++
		r.printf("rounds: %s; adding round %d (at most %d)\n", why, rounds, reps.Max)
		next, err := newPlan(r.s, plan.Scaling, rounds)
		if err != nil {
			return plan, err
		}
		plan = next
		r.ix.Planned = len(plan.Cells)
		if err := r.execute(ctx, plan); err != nil {
			return plan, err
		}
		ro.Ran = rounds
	}
	r.ix.Rounds = ro
	return plan, r.writeIndex()
}

// precise reads the results so far and says whether every mesh's p50
// overhead has a 95% interval narrower than ci of itself (StopNarrow), or
// cannot have one (StopNoBasis), or "" to go on; why says which overhead
// is widest.
func (r *runner) precise(ci float64) (stop, why string) {
	d, err := analysis.Load(r.dir, analysis.Options{Logger: r.log})
	if err != nil {
		return "", fmt.Sprintf("results unreadable (%v)", err)
	}
	w, ok := d.WidestOverhead(analysis.P50)
	if !ok {
		return StopNoBasis, "no baseline and other mesh to compare, so no overhead to narrow"
	}
	return precisionVerdict(w, ci)
}

// precisionVerdict is the adaptive stopping rule on the widest overhead.
func precisionVerdict(w analysis.Precision, ci float64) (stop, why string) {
	where := fmt.Sprintf("%s at %s", w.Mesh, w.Config.Label())
	if w.Relative < ci {
		return StopNarrow, fmt.Sprintf("every p50 overhead's 95%% interval is within ±%.0f%% of it (widest: %s, ±%.1f%%)", 100*ci, where, 100*w.Relative)
	}
	return "", fmt.Sprintf("the p50 overhead of %s has an interval of ±%.0f%% of itself, over ±%.0f%%", where, 100*w.Relative, 100*ci)
}

// rerunNoisy runs every noisy cell again, up to the study's retries, after
// all the others: host noise is usually another job's burst, and a later
// attempt often finds the host quiet. Every attempt is kept, in its own
// file; the index uses the preferred one (a quiet one), and lists the
// others. A cell still noisy stays marked so that reports leave it out.
func (r *runner) rerunNoisy(ctx context.Context, plan *Plan) error {
	retries := *r.s.Noise.Retries
	for round := 1; round <= retries; round++ {
		var noisy []Cell
		for _, s := range r.ix.Cells {
			if !toRemeasure(s) {
				continue
			}
			if i := slices.IndexFunc(plan.Cells, func(c Cell) bool { return c.ID == s.ID }); i >= 0 {
				noisy = append(noisy, plan.Cells[i])
			}
		}
		if len(noisy) == 0 {
			return nil
		}
		r.printf("noise: %d cells were measured on a noisy host (more than %.3g cores of host noise, or CPUs more than %.0f%% slower than at their fastest); running them again (round %d of %d)\n",
			len(noisy), r.s.Noise.Threshold, 100*results.SlowdownLimit, round, retries)
		for _, c := range noisy {
			if err := r.waitQuiet(ctx); err != nil {
				return err
			}
			i := slices.IndexFunc(r.ix.Cells, func(s results.Summary) bool { return s.ID == c.ID })
			old := r.ix.Cells[i]
			cell, err := r.runCell(ctx, c)
			if err != nil {
				return err
			}
			// A resumed run goes on counting a cell's attempts; each has its
			// own file.
			cell.Attempt = lastAttempt(old) + 1
			cell.File = results.AttemptFile(c.ID, cell.Attempt)
			if err := results.WriteCell(r.dir, cell); err != nil {
				return fmt.Errorf("results: %w", err)
			}
			// The index keeps cells in the order they ran: the cell moves to
			// the end, with the attempt its figures come from.
			use := cell.Summary
			if results.PreferredAttempt(use, old) {
				use.Attempts = append(slices.Clone(old.Attempts), results.AttemptOf(old))
			} else {
				use = old
				use.Attempts = append(slices.Clone(old.Attempts), results.AttemptOf(cell.Summary))
			}
			r.ix.Cells = append(slices.Delete(r.ix.Cells, i, i+1), use)
			if err := r.writeIndex(); err != nil {
				return err
			}
			r.printf("noise: %s attempt %d: %s\n", c.ID, cell.Attempt, noiseText(cell.Summary))
		}
	}
	var still []string
	for _, s := range r.ix.Cells {
		if s.Noisy {
			still = append(still, s.ID)
		}
	}
	if len(still) > 0 {
		r.printf("noise: %d cells stayed noisy after %d more attempts and are left out of the report's figures (measure them again on a quieter host with 'meshbench run --resume %s'): %v\n", len(still), retries, r.dir, still)
	}
	return nil
}

// lastAttempt is the number of a cell's latest attempt.
func lastAttempt(s results.Summary) int {
	n := max(s.Attempt, 1)
	for _, a := range s.Attempts {
		n = max(n, a.Attempt)
	}
	return n
}

func noiseText(s results.Summary) string {
	if s.HostNoise == nil {
		return "host noise not measured"
	}
	if s.Noisy {
		return s.NoiseReason() + ", still noisy"
	}
	return fmt.Sprintf("host noise %.3f cores, quiet", *s.HostNoise)
}

// noteNoise records the noise guard in the index the first time the
// platform reports host noise, and a calibration's noise by mesh.
func (r *runner) noteNoise(h *infra.HostCPU, calibrationMesh string) {
	if h == nil {
		return
	}
	if r.ix.Noise == nil {
		r.ix.Noise = &results.NoiseGuard{Threshold: r.s.Noise.Threshold, Retries: *r.s.Noise.Retries}
	}
	if calibrationMesh == "" {
		return
	}
	if r.ix.Noise.Calibration == nil {
		r.ix.Noise.Calibration = map[string]float64{}
	}
	r.ix.Noise.Calibration[calibrationMesh] = h.Noise
	if results.Noisy(h, r.s.Noise.Threshold) {
		r.printf("calibration: %s measured on a noisy host (%s): its capacity, and the load scaled from it, may be low\n", calibrationMesh, r.hostText(h))
	}
}

// hostText says what a calibration's host did, against the noise guard's
// limits.
func (r *runner) hostText(h *infra.HostCPU) string {
	return fmt.Sprintf("%.3f cores of host noise, threshold %.3g; CPUs %.0f%% slower than at their fastest, limit %.0f%%",
		h.Noise, r.s.Noise.Threshold, 100*h.Slowdown, 100*results.SlowdownLimit)
}
