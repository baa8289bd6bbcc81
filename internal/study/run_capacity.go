package study

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// ErrSearchResume says that a capacity search cannot be resumed: its
// searches' state lives only in the running process.
var ErrSearchResume = errors.New("a capacity search cannot be resumed; run the study again")

// meshSearch is one mesh's search during a run.
type meshSearch struct {
	mesh   Mesh
	s      *search.Search
	entry  int // index in the results' Capacity
	failed bool
}

// searchCapacities runs the study's search for every mesh on one
// deployment of the workload. Each round visits every unfinished mesh
// once, in an order shuffled with the study's seed, and runs its next
// trials (see visitLength), so that the meshes' trials interleave and
// machine drift spreads over all of them. Every trial is recorded as a cell file, and the index
// rewritten after it.
func (r *runner) searchCapacities(ctx context.Context) error {
	cfg := r.s.Search.Config()
	var all []*meshSearch
	for _, m := range r.s.Meshes {
		s, err := search.New(r.searchConfig(cfg, m))
		if err != nil {
			return fieldError("search", "%v", err)
		}
		all = append(all, &meshSearch{mesh: m, s: s, entry: len(r.ix.Capacity)})
		r.ix.Capacity = append(r.ix.Capacity, results.Capacity{Mesh: m.Name, Profile: m.Profile, Over: r.s.Search.Over,
			Result: search.Result{SLO: cfg.SLO}, Trials: []results.CapacityTrial{}, Status: results.CapacityRunning})
	}
	if err := r.writeIndex(); err != nil {
		return err
	}
	from := fmt.Sprintf("%g req/s", cfg.Start)
	if f := r.s.Search.StartFraction; f > 0 {
		var starts []string
		for _, ms := range all {
			starts = append(starts, fmt.Sprintf("%s %g", ms.mesh.Name, ms.s.Config().Start))
		}
		from = fmt.Sprintf("%g of each mesh's calibrated capacity (%s req/s)", f, strings.Join(starts, ", "))
	}
	if r.s.Search.overConnections() {
		from = fmt.Sprintf("%g connections held open, each sending %g req/s", cfg.Start, r.s.Search.PerConnectionRate)
	}
	r.printf("study %s: capacity search for %d meshes at %s, from %s; results in %s\n",
		r.s.Name, len(all), cfg.SLO, from, r.dir)
	rng := rand.New(rand.NewPCG(r.s.Order.Seed, 1))
	trial := 0
	for {
		var open []*meshSearch
		for _, ms := range all {
			if !ms.failed && !ms.s.Done() {
				open = append(open, ms)
			}
		}
		if len(open) == 0 {
			break
		}
		if *r.s.Order.Shuffle {
			rng.Shuffle(len(open), func(i, j int) { open[i], open[j] = open[j], open[i] })
		}
		for _, ms := range open {
			// A visit runs trials of its mesh until they have measured
			// visitLength: switching meshes costs an installation (seconds
			// on the lab, a sidecar per pod), which one trial per visit
			// would pay every few seconds of measurement.
			var measured time.Duration
			for step, ok := ms.s.Next(); ok && !ms.failed && measured < visitLength(cfg); step, ok = ms.s.Next() {
				trial++
				if err := r.searchTrial(ctx, ms, step, trial); err != nil {
					return err
				}
				measured += step.Duration
			}
		}
	}
	for _, ms := range all {
		c := &r.ix.Capacity[ms.entry]
		if ms.failed {
			continue
		}
		c.Result = ms.s.Result()
		c.Result.Trials = nil // the entry's own Trials hold them, with their files
		c.Status = results.StatusOK
		r.printf("capacity %s: %s\n", ms.mesh.Name, capacityText(c))
	}
	return r.writeIndex()
}

// searchConfig is mesh m's search: the study's, started at
// search.start_fraction of the closed-loop capacity the first
// deployment's calibration measured for m, where the study asks for it
// and that deployment measured m (not below start_rate, nor above
// max_rate). The result keeps it (Result.Config), so that the
// bootstrap replays the search as it ran.
func (r *runner) searchConfig(cfg search.Config, m Mesh) search.Config {
	f := r.s.Search.StartFraction
	d, ok := r.recorded(1)
	if f <= 0 || !ok || d.Scaling == nil || d.Scaling.Capacities[m.Name] <= 0 {
		return cfg
	}
	start := math.Max(cfg.Start, math.Round(f*d.Scaling.Capacities[m.Name]))
	if cfg.MaxRate > 0 {
		start = math.Min(start, cfg.MaxRate)
	}
	cfg.Start = start
	return cfg
}

// visitLength is the measured time a visit to a mesh runs its trials for:
// a few trials, or one long one at a low rate.
func visitLength(cfg search.Config) time.Duration { return 4 * cfg.Trial }

// searchTrial runs one trial of a mesh's search as a cell and records it.
func (r *runner) searchTrial(ctx context.Context, ms *meshSearch, step search.Step, n int) error {
	c := r.s.trialCell(ms.mesh, step, len(r.ix.Capacity[ms.entry].Trials)+1)
	started := time.Now()
	cell, gens, err := r.measureCell(ctx, c)
	if err != nil {
		return err
	}
	if err := results.WriteCell(r.dir, cell); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	entry := &r.ix.Capacity[ms.entry]
	if cell.Status == results.StatusFailed && cell.Merged == nil && r.mesh != ms.mesh.Name {
		// The mesh could not be installed: its search cannot go on.
		ms.failed = true
		entry.Status, entry.Reason = results.StatusFailed, cell.Reason
		r.printf("[trial %d] %s: failed: %s\n", n, ms.mesh.Name, cell.Reason)
		return r.writeIndex()
	}
	o := trialOutcome(cell, gens)
	if r.s.Search.overConnections() {
		// The search judges what was achieved in its own unit: the
		// connections whose slow requests the generators kept up with.
		o.Achieved /= r.s.Search.PerConnectionRate
	}
	t := ms.s.Record(o)
	entry.Trials = append(entry.Trials, results.CapacityTrial{Trial: t, ID: cell.ID, File: cell.File, SHA256: cell.SHA256, Bytes: cell.Bytes})
	if ms.s.Done() {
		entry.Result = ms.s.Result()
		entry.Result.Trials = nil
	}
	offered := fmt.Sprintf("%.1f req/s", t.Rate)
	achieved := fmt.Sprintf("%.1f req/s", t.Achieved)
	if r.s.Search.overConnections() {
		offered = fmt.Sprintf("%.0f connections", t.Rate)
		achieved = fmt.Sprintf("%.1f req/s", t.Achieved*r.s.Search.PerConnectionRate)
	}
	r.printf("[trial %d] %s %s %s for %s: %s · p50 %.2fms p99 %.2fms, achieved %s (%s)\n",
		n, ms.mesh.Name, t.Phase, offered, t.Duration, verdictText(t), t.P50Ms, t.P99Ms, achieved, round(time.Since(started)))
	if err := r.writeIndex(); err != nil {
		return err
	}
	if cell.Noisy {
		// The trial will be run again: not into the same contention.
		return r.waitQuiet(ctx)
	}
	return nil
}

// trialOutcome is what the search judges of a trial's cell: its
// generators' merged figures; saturated when any generator's process, or
// the load node's CPUs, were; noisy when the host noise was over the
// study's threshold (record decided both); saturated too when the load
// side reached a limit of its own (record says so in the cell's reason),
// which is the generator's ceiling and not the system's. A measurement
// that failed outright, or on a data plane that did not hold, is no
// evidence.
func trialOutcome(cell *results.Cell, gens []load.Result) search.Outcome {
	if len(gens) == 0 || strings.HasPrefix(cell.Reason, notHeld) {
		return search.Outcome{Unmeasured: true, Reason: cell.Reason}
	}
	o, _ := load.Outcome(gens)
	var why []string
	if own, ok := strings.CutPrefix(cell.Reason, atOwnLimit); ok && !slices.ContainsFunc(gens, ownLimited) {
		// Not a generator's failed requests, which load.Outcome names:
		// what the platform saw (Measurement.Limits).
		o.Saturated = true
		why = append(why, own)
	}
	if o.Reason != "" {
		why = append(why, o.Reason)
	}
	if node, full := results.LoadNodeSaturated(cell.Host); full {
		o.Saturated = true
		why = append(why, node)
	}
	if cell.Noisy {
		o.Noisy = true
		why = append(why, cell.NoiseReason())
	}
	o.Reason = strings.Join(why, "; ")
	return o
}

// trialCell is the cell one search trial runs: the study's workload and
// load, whatever its sweeps set for its cells, at the step's total rate
// shared among the generators, for the step's length after the load's
// warm-up.
func (s *Study) trialCell(m Mesh, step search.Step, n int) Cell {
	pt := point{setting: s.baseSetting()}
	pt.params = map[string]string{"rate": strconv.FormatFloat(step.Rate, 'f', -1, 64)}
	c := s.cell(m, n, 1, pt, results.Scaling{Mode: results.ScaleNone})
	c.ID = fmt.Sprintf("search-%s-t%02d", m.Name, n)
	gens := float64(pt.setting.generators())
	c.Load.Options.Rate = step.Rate / gens
	if s.Search.overConnections() {
		// The step's rate is the connections to hold, shared among the
		// generators, each connection sending its slow requests.
		conns := max(1, int(math.Round(step.Rate/gens)))
		c.Load.Options.Connections = conns
		c.Load.Options.Rate = float64(conns) * s.Search.PerConnectionRate
	}
	c.Load.Options.Duration = step.Duration
	c.Load.Options.Requests = 0
	return c
}

func ownLimited(r load.Result) bool {
	_, own := r.OwnLimit()
	return own
}

func verdictText(t search.Trial) string {
	if t.Why == "" {
		return string(t.Verdict)
	}
	return string(t.Verdict) + " (" + t.Why + ")"
}

func capacityText(c *results.Capacity) string {
	unit := "req/s"
	if c.Over == results.OverConnections {
		unit = "connections"
	}
	s := c.Describe(unit)
	if c.Note != "" {
		s += "; " + c.Note
	}
	return s
}
