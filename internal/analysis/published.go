package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/results"
)

// Fidelity is one published figure beside this run's.
type Fidelity struct {
	Published results.Published
	// Config is the configuration the run's figure comes from.
	Config LoadConfig
	// Measured is this run's figure in the published figure's unit; OK is
	// false when the run has no cells to compute it from.
	Measured float64
	OK       bool
}

// Ratio is the measured figure over the published one (0 when either is
// missing or zero).
func (f Fidelity) Ratio() float64 {
	if !f.OK || f.Published.Value == 0 {
		return 0
	}
	return f.Measured / f.Published.Value
}

// Unit is the figure's unit as the report prints it.
func (f Fidelity) Unit() string {
	rel, base := f.Published.Split()
	switch {
	case rel == results.RelationRatio:
		return "×"
	case rel == results.RelationReduction:
		return "% less"
	case Metric(base).IsLatency():
		return "ms"
	case Metric(base).IsMemory():
		return "MiB"
	case Metric(base).IsCPU():
		return "cores"
	case Metric(base) == QPS:
		return "req/s"
	}
	return ""
}

// Fidelities computes this run's figure for every published figure the
// results carry, in the order the study lists them. The figure comes
// from the configuration whose parameters match the published figure's;
// where several match (a sweep the study did not vary), the last; of a
// tenant-scaled run's tenant counts, the smallest: one tenant at the
// study's rate (or the lowered one) on the lab is the shape of a tenant
// in the study, and the larger count is there to extrapolate additive
// figures from.
func (d *Dataset) Fidelities() []Fidelity {
	var out []Fidelity
	for _, p := range d.Index.Provenance.Published {
		f := Fidelity{Published: p}
		if c, ok := d.matching(p.Params); ok {
			f.Config = c
			f.Measured, f.OK = d.figure(p, c)
		}
		out = append(out, f)
	}
	return out
}

func (d *Dataset) matching(params map[string]string) (LoadConfig, bool) {
	var found LoadConfig
	ok := false
	for _, c := range d.Configs {
		if !mapsMatch(params, c.Params) {
			continue
		}
		if !ok || tenantsOf(c) <= tenantsOf(found) {
			found, ok = c, true
		}
	}
	return found, ok
}

func mapsMatch(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func tenantsOf(c LoadConfig) int {
	var n int
	fmt.Sscan(c.Params[results.TenantsParam], &n)
	return n
}

// figure is a published figure's counterpart at c: the median over the
// repetitions, and for a relation, computed from both meshes' medians.
func (d *Dataset) figure(p results.Published, c LoadConfig) (float64, bool) {
	rel, base := p.Split()
	value := func(mesh string) (float64, bool) {
		g := d.Group(mesh, c)
		if g == nil {
			return 0, false
		}
		e := g.Estimate(Metric(base))
		if !e.Valid() {
			return 0, false
		}
		if Metric(base).IsMemory() {
			return e.Median / (1 << 20), true
		}
		return e.Median, true
	}
	v, ok := value(p.Mesh)
	if !ok || rel == "" {
		return v, ok
	}
	against := cmp.Or(p.Against, d.Baseline)
	a, ok := value(against)
	if !ok {
		return 0, false
	}
	switch rel {
	case results.RelationAdded:
		return v - a, true
	case results.RelationRatio:
		return v / a, a != 0
	case results.RelationReduction:
		return 100 * (1 - v/a), a != 0
	}
	return 0, false
}

// Reproduction says, for the published figures of one metric at one
// configuration across meshes, whether the run orders the meshes as the
// study did and, for figures relative to the baseline, the ratio of the
// largest to the smallest.
type Reproduction struct {
	Metric    string
	Params    map[string]string
	Published []string // meshes from lowest to highest published figure
	Measured  []string // the same meshes by this run's figure
	// Swaps are the pairs of meshes this run orders the other way round
	// from the study.
	Swaps []Swap
	// PublishedSpread and MeasuredSpread are the largest figure over the
	// smallest, for "added:" figures (the ratio of the overheads); 0
	// otherwise.
	PublishedSpread, MeasuredSpread float64
}

// Swap is two meshes in the opposite order to the study's: Low has the
// lower published figure and the higher measured one. Apart reports
// whether the run tells them apart: the 95% interval of the difference
// between their repetitions excludes zero. Two meshes it cannot tell
// apart are not evidence against the study's order.
type Swap struct {
	Low, High string
	Apart     bool
}

// Reproduces reports whether the run agrees with the study's ordering:
// every pair it orders the other way round is one it cannot tell apart.
func (r Reproduction) Reproduces() bool {
	for _, s := range r.Swaps {
		if s.Apart {
			return false
		}
	}
	return true
}

// Reproductions groups the fidelities by metric and parameters and
// compares the meshes' orderings; groups with fewer than two measured
// meshes are left out.
func (d *Dataset) Reproductions(fs []Fidelity) []Reproduction {
	type key struct{ metric, params string }
	groups := map[key][]Fidelity{}
	var order []key
	for _, f := range fs {
		if !f.OK {
			continue
		}
		k := key{f.Published.Metric, newConfig(f.Published.Params).Key}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	var out []Reproduction
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		r := Reproduction{Metric: k.metric, Params: g[0].Published.Params}
		byPub := slices.Clone(g)
		slices.SortStableFunc(byPub, func(a, b Fidelity) int { return cmp.Compare(a.Published.Value, b.Published.Value) })
		byRun := slices.Clone(g)
		slices.SortStableFunc(byRun, func(a, b Fidelity) int { return cmp.Compare(a.Measured, b.Measured) })
		for i := range g {
			r.Published = append(r.Published, byPub[i].Published.Mesh)
			r.Measured = append(r.Measured, byRun[i].Published.Mesh)
		}
		for i, lo := range byPub {
			for _, hi := range byPub[i+1:] {
				if lo.Published.Value < hi.Published.Value && lo.Measured > hi.Measured {
					r.Swaps = append(r.Swaps, Swap{Low: lo.Published.Mesh, High: hi.Published.Mesh, Apart: d.apart(lo, hi)})
				}
			}
		}
		if rel, _ := g[0].Published.Split(); rel == results.RelationAdded {
			lo, hi := byPub[0], byPub[len(byPub)-1]
			if lo.Published.Value > 0 && lo.Measured > 0 {
				r.PublishedSpread = hi.Published.Value / lo.Published.Value
				r.MeasuredSpread = hi.Measured / lo.Measured
			}
		}
		out = append(out, r)
	}
	return out
}

// apart reports whether the run tells two meshes' figures apart. Figures
// of one relation to the same mesh (an overhead over the baseline, a
// ratio to it) order as the meshes' own values do, so the difference of
// those values, paired by round, decides. Without the
// repetitions to decide, the figures count as apart: an ordering is only
// excused by an interval that shows it could go either way.
func (d *Dataset) apart(a, b Fidelity) bool {
	rel, base := a.Published.Split()
	if rel != "" && a.Published.Against != b.Published.Against {
		return true
	}
	ga, gb := d.Group(a.Published.Mesh, a.Config), d.Group(b.Published.Mesh, b.Config)
	if ga == nil || gb == nil {
		return true
	}
	// An interval below the nominal level that holds zero excuses the
	// order too: a nominal one would be wider still.
	e := Paired(ga.Sample(Metric(base)), gb.Sample(Metric(base))).Delta
	return !e.Interval() || e.Lo > 0 || e.Hi < 0
}

// ParamsText is a figure's parameters as "name=value", sorted, or "".
func ParamsText(params map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		parts = append(parts, k+"="+params[k])
	}
	return strings.Join(parts, " ")
}
