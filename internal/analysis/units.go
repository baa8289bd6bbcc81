package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// The unit of every interval is the independent deployment: a study's
// repetitions span deployments (each its own platform, workload, mesh
// installations and calibration), and repetitions of one deployment share
// whatever that deployment drew, so they are not independent of each
// other. A figure's unit value is the median of its deployment's
// repetitions; intervals are distribution-free over the units. Results
// that hold one deployment (schema 16 and older, or a study with
// deployments: 1) have only the variation between its rounds to show, and
// their units are the rounds.

// Obs is one usable repetition's value of a figure, with the deployment
// and the round (the repetition number, shared by every mesh measured in
// that round) that measured it.
type Obs struct {
	Deployment int
	Round      int
	V          float64
	// Bound is AtLeast where the value is a percentile censored at the
	// cell's timeout (see Bound).
	Bound Bound
}

// Sample is a figure's values over a group's usable repetitions.
type Sample []Obs

// Values are the sample's values in its order.
func (s Sample) Values() []float64 {
	out := make([]float64, len(s))
	for i, o := range s {
		out[i] = o.V
	}
	return out
}

// Deployments is how many deployments the sample's values come from.
func (s Sample) Deployments() int { return len(s.byDeployment()) }

func (s Sample) byDeployment() map[int][]Obs {
	out := map[int][]Obs{}
	for _, o := range s {
		out[o.Deployment] = append(out[o.Deployment], o)
	}
	return out
}

// Units are the sample's independent values: each deployment's median,
// in deployment order, or the values themselves when they come from one
// deployment.
func (s Sample) Units() []float64 {
	by := s.byDeployment()
	if len(by) <= 1 {
		return s.Values()
	}
	var out []float64
	for _, d := range slices.Sorted(maps.Keys(by)) {
		out = append(out, Median(Sample(by[d]).Values()))
	}
	return out
}

// MeanUnits are the sample's independent values for a figure whose mean
// is wanted (a price): each deployment's mean, or the values themselves
// when they come from one deployment.
func (s Sample) MeanUnits() []float64 {
	by := s.byDeployment()
	if len(by) <= 1 {
		return s.Values()
	}
	var out []float64
	for _, d := range slices.Sorted(maps.Keys(by)) {
		var sum float64
		for _, o := range by[d] {
			sum += o.V
		}
		out = append(out, sum/float64(len(by[d])))
	}
	return out
}

// RepSample is a sample of one value per repetition of a group, values[i]
// of reps[i], for figures computed from the repetitions outside the
// group's metrics (a price).
func RepSample(reps []*Rep, values []float64) Sample {
	out := make(Sample, len(values))
	for i, v := range values {
		out[i] = Obs{Deployment: reps[i].Summary.DeploymentOf(), Round: reps[i].Summary.Repetition, V: v}
	}
	return out
}

// PairedUnits are a blocked design's units: per deployment, the median over
// its rounds of other less base measured in the same round (Delta), and
// of that difference in percent of the round's base (Pct, NaN where the
// base is zero); per round when there is one deployment. Rounds in which
// either side has no usable value are left out. Bounds are the bound of
// each unit's Delta and Pct: at least where other's value was censored,
// at most where base's was.
type PairedUnits struct {
	Delta, Pct []float64
	Bounds     []Bound
}

// PairUnits matches other's rounds with base's.
func PairUnits(base, other Sample) PairedUnits {
	b := map[int]Obs{}
	for _, o := range base {
		b[o.Round] = o
	}
	type pair struct {
		dep        int
		delta, pct float64
		bound      Bound
	}
	var pairs []pair
	for _, o := range other {
		x, ok := b[o.Round]
		if !ok {
			continue
		}
		p := math.NaN()
		if x.V != 0 {
			p = 100 * (o.V - x.V) / x.V
		}
		pairs = append(pairs, pair{o.Deployment, o.V - x.V, p, joinBounds(o.Bound, x.Bound.negated())})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.dep, b.dep) })
	deps := map[int]bool{}
	for _, p := range pairs {
		deps[p.dep] = true
	}
	var out PairedUnits
	if len(deps) <= 1 {
		for _, p := range pairs {
			out.Delta, out.Pct, out.Bounds = append(out.Delta, p.delta), append(out.Pct, p.pct), append(out.Bounds, p.bound)
		}
		return out
	}
	for i := 0; i < len(pairs); {
		j := i
		var ds, ps []float64
		var bs []Bound
		for ; j < len(pairs) && pairs[j].dep == pairs[i].dep; j++ {
			ds, ps, bs = append(ds, pairs[j].delta), append(ps, pairs[j].pct), append(bs, pairs[j].bound)
		}
		pct := math.NaN()
		if !slices.ContainsFunc(ps, math.IsNaN) {
			pct = Median(ps)
		}
		delta, bound := medianBounded(ds, bs)
		out.Delta, out.Pct, out.Bounds = append(out.Delta, delta), append(out.Pct, pct), append(out.Bounds, bound)
		i = j
	}
	return out
}
