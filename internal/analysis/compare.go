package analysis

import (
	"fmt"
	"slices"
)

// Verdict is what a difference with its interval allows one to say.
type Verdict int

// Verdicts.
const (
	// TooFewRuns: the difference has no interval, or one whose design
	// reaches less than the nominal level, so it cannot be called
	// measurable.
	TooFewRuns Verdict = iota
	// NoDifference: the interval includes zero. It is not a win for
	// either side.
	NoDifference
	Higher
	Lower
	// Censored: the interval's end beyond zero is only a bound on the
	// wrong side (a censored figure: timeouts), so it shows no
	// difference either way.
	Censored
)

// Judge reads a difference at the nominal level.
func Judge(d Diff) Verdict {
	switch {
	case !d.Delta.Interval() || d.Delta.BelowNominal():
		return TooFewRuns
	case d.Delta.Lo > 0 && d.Delta.LoBound.lowerBounds():
		return Higher
	case d.Delta.Hi < 0 && d.Delta.HiBound.upperBounds():
		return Lower
	case d.Delta.Lo > 0 || d.Delta.Hi < 0:
		return Censored
	}
	return NoDifference
}

// Change is one figure of one group compared between two runs of a study,
// or between two meshes of one run: Diff is B minus A (the newer minus
// the older). Added says the figure is the mesh's overhead over its run's
// baseline (Metric's value less the baseline's in the same round), which
// the gate's family holds by default.
type Change struct {
	Mesh   string
	Config LoadConfig
	Metric Metric
	Added  bool
	Diff   Diff
	// Gated says the change is in the gate's primary family; P is then
	// the one-sided p-value of its rank test that B is worse, and
	// Regression is the gate's decision on it (see Gate).
	Gated      bool
	P          float64
	Regression bool
}

// Figure names the change's figure: "added p50" for an overhead, else
// the metric's label.
func (c Change) Figure() string {
	if c.Added {
		return "added " + c.Metric.Label()
	}
	return c.Metric.Label()
}

// Name is the change's figure in the gate's terms (GateSpec): the metric,
// "added:" before an overhead.
func (c Change) Name() string {
	if c.Added {
		return AddedPrefix + string(c.Metric)
	}
	return string(c.Metric)
}

// worseP is the one-sided p-value that B is worse than A.
func (c Change) worseP() float64 {
	if c.Metric.HigherIsBetter() {
		return c.Diff.PLower
	}
	return c.Diff.PHigher
}

// Regressed reports whether B is measurably worse than A.
func (c Change) Regressed() bool {
	v := Judge(c.Diff)
	return (v == Higher && !c.Metric.HigherIsBetter()) || (v == Lower && c.Metric.HigherIsBetter())
}

// Improved reports whether B is measurably better than A. A figure of B
// censored at the timeout (its requests failed) is never an improvement.
func (c Change) Improved() bool {
	if c.Diff.Other.Censored() {
		return false
	}
	v := Judge(c.Diff)
	return (v == Lower && !c.Metric.HigherIsBetter()) || (v == Higher && c.Metric.HigherIsBetter())
}

// Comparison is two runs of a study compared group by group.
type Comparison struct {
	A, B    *Dataset
	Changes []Change // in B's mesh and configuration order, then metric order, overheads last
	// OnlyA and OnlyB name the groups ("mesh at config") one run lacks.
	OnlyA, OnlyB []string
}

// Compare compares every group the two runs share on the given metrics,
// each run's units against the other's (Between), and each mesh's
// overhead over its run's baseline on the latency metrics among them;
// metrics a group lacks in either run are skipped. A configuration that
// either run ran as a closed loop gets no overheads: its latency is its
// connections over its throughput (Little's law), so an added latency
// would restate a loss of throughput; its throughput (QPS) is compared
// instead, whether or not ms names it, and stands in for them in the
// gate (see Gate).
func Compare(a, b *Dataset, ms []Metric) *Comparison {
	c := &Comparison{A: a, B: b}
	for _, mesh := range b.Meshes {
		for _, cfg := range b.Configs {
			gb := b.Group(mesh, cfg)
			if gb == nil {
				continue
			}
			ga := a.Group(mesh, cfg)
			if ga == nil {
				c.OnlyB = append(c.OnlyB, mesh+" at "+cfg.Label())
				continue
			}
			closed := a.ClosedLoopAt(cfg) || b.ClosedLoopAt(cfg)
			gms := ms
			if closed && !slices.Contains(ms, QPS) {
				gms = append(slices.Clip(ms), QPS)
			}
			for _, m := range gms {
				ua, ba := ga.Sample(m).BoundedUnits()
				ub, bb := gb.Sample(m).BoundedUnits()
				if len(ua) == 0 || len(ub) == 0 {
					continue
				}
				c.Changes = append(c.Changes, Change{Mesh: mesh, Config: cfg, Metric: m, Diff: BetweenBounded(ua, ba, ub, bb)})
			}
			for _, m := range ms {
				if closed || !m.IsLatency() {
					continue
				}
				ua, oka := a.overheadUnits(mesh, cfg, m)
				ub, okb := b.overheadUnits(mesh, cfg, m)
				if !oka || !okb || len(ua.Delta) == 0 || len(ub.Delta) == 0 {
					continue
				}
				c.Changes = append(c.Changes, Change{Mesh: mesh, Config: cfg, Metric: m, Added: true, Diff: BetweenBounded(ua.Delta, ua.Bounds, ub.Delta, ub.Bounds)})
			}
		}
	}
	for _, mesh := range a.Meshes {
		for _, cfg := range a.Configs {
			if a.Group(mesh, cfg) != nil && b.Group(mesh, cfg) == nil {
				c.OnlyA = append(c.OnlyA, mesh+" at "+cfg.Label())
			}
		}
	}
	return c
}

// overheadUnits are a mesh's paired units over the run's baseline (see
// PairUnits); false for the baseline, or without one.
func (d *Dataset) overheadUnits(mesh string, c LoadConfig, m Metric) (PairedUnits, bool) {
	if d.Baseline == "" || mesh == d.Baseline {
		return PairedUnits{}, false
	}
	b, o := d.Group(d.Baseline, c), d.Group(mesh, c)
	if b == nil || o == nil {
		return PairedUnits{}, false
	}
	return PairUnits(b.Sample(m), o.Sample(m)), true
}

// String is the change's place: "sidecar added p50 at connections=32".
func (c Change) String() string {
	return fmt.Sprintf("%s %s at %s", c.Mesh, c.Figure(), c.Config.Label())
}
