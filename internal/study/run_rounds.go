package study

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// How a run's count of rounds was decided, as results.Rounds.Stop says
// it. Results before schema 17 also hold "narrow" and "max", from the
// adaptive stopping rule this replaced.
const (
	StopFixed   = "fixed"    // a fixed number of repetitions
	StopPlanned = "planned"  // the pilot planned the total
	StopNoBasis = "no-basis" // a pilot without a baseline and another mesh planned nothing more
)

// runRounds runs the study's deployments one after another, each with its
// own platform, calibration and rounds (runDeployment); for a planned
// count, the pilot's deployments first, then as many more as the pilot's
// spread plans (planRounds), decided once. It records what ran.
func (r *runner) runRounds(ctx context.Context) error {
	reps := r.s.Repetitions
	ro := &results.Rounds{Min: reps.Min, Max: reps.Max, CI: reps.CI, Stop: StopFixed}
	rounds := reps.Min
	r.startProgress(rounds)
	for dep := 1; dep <= r.s.DeploymentOf(rounds); dep++ {
		if err := r.runDeployment(ctx, dep, rounds); err != nil {
			return err
		}
	}
	if reps.Adaptive() {
		planned, why := r.planRounds(reps)
		ro.Planned, ro.Stop = planned, StopPlanned
		if planned == rounds && strings.HasPrefix(why, "no ") {
			ro.Stop = StopNoBasis
		}
		r.printf("rounds: %s; %d rounds in all\n", why, planned)
		r.startProgress(planned)
		for dep := r.s.DeploymentOf(rounds) + 1; dep <= r.s.DeploymentOf(planned); dep++ {
			if err := r.runDeployment(ctx, dep, planned); err != nil {
				return err
			}
		}
		rounds = planned
	}
	ro.Ran, ro.Deployments = rounds, r.s.DeploymentOf(rounds)
	r.ix.Rounds = ro
	if p, err := newPlan(r.s, r.s.ScalingFor(r.o.Scale), rounds); err == nil {
		for id := range r.done {
			if !slices.ContainsFunc(p.Cells, func(c Cell) bool { return c.ID == id }) {
				r.log.Warn("a finished cell is not in the plan; this meshbench plans the study differently", "cell", id)
			}
		}
	}
	return r.writeIndex()
}

// startProgress plans the study's cells over the given rounds, for the
// index's planned count and the progress lines, and says so.
func (r *runner) startProgress(rounds int) {
	p, err := newPlan(r.s, r.s.ScalingFor(r.o.Scale), rounds)
	if err != nil {
		return // newPlan checked the study before the run
	}
	r.ix.Planned, r.prog = len(p.Cells), newProgress(p, r.done)
	r.printf("study %s: %d cells (%d to run) in %s, estimated %s; results in %s\n",
		p.Study, len(p.Cells), r.prog.left, plural(p.Deployments, "deployment"), round(r.prog.remaining()), r.dir)
}

// planRounds is the pilot's plan: the total rounds at which the widest p50
// overhead's interval would be within the study's ci of itself, assuming
// its half-width shrinks as the square root of the units (each a
// deployment, or a round of one deployment), rounded up to whole
// deployments and capped at the maximum; why says what the pilot found.
// Only the pilot decides, before any further round is measured, so the
// count cannot favour the samples that happen to bunch.
func (r *runner) planRounds(reps Repetitions) (int, string) {
	d, err := analysis.Load(r.dir, analysis.Options{Logger: r.log})
	if err != nil {
		return reps.Min, fmt.Sprintf("no plan: results unreadable (%v)", err)
	}
	w, ok := d.WidestOverhead(analysis.P50)
	if !ok {
		return reps.Min, "no baseline and other mesh to compare, so no overhead to plan for"
	}
	return planFrom(w, reps, r.s.RoundsPerDeployment())
}

// planFrom turns the pilot's widest overhead into a count of rounds.
func planFrom(w analysis.Precision, reps Repetitions, perDeployment int) (int, string) {
	where := fmt.Sprintf("%s at %s", w.Mesh, w.Config.Label())
	per := max(perDeployment, 1)
	if math.IsInf(w.Relative, 1) || w.Units < 2 {
		return reps.Max, fmt.Sprintf("the pilot's p50 overhead of %s has no interval yet, so the maximum is planned", where)
	}
	units := int(math.Ceil(float64(w.Units) * (w.Relative / reps.CI) * (w.Relative / reps.CI)))
	rounds := min(max(units*per, reps.Min), reps.Max)
	rounds = (rounds + per - 1) / per * per
	if rounds > reps.Max {
		rounds -= per
	}
	return rounds, fmt.Sprintf("the pilot's widest p50 overhead, %s, has an interval of ±%.1f%% of itself from %d units; ±%.0f%% needs about %d units",
		where, 100*w.Relative, w.Units, 100*reps.CI, units)
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
