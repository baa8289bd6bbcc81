package analysis

import (
	"slices"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Group is every repetition of one mesh at one load configuration.
type Group struct {
	Mesh     string
	Config   LoadConfig
	Reps     []*Rep // usable repetitions, in repetition order
	Excluded []Exclusion
	latency  *metrics.Histogram // pooled over Reps
	cache    map[Metric]Estimate
}

// Values returns the metric's value in each usable repetition that has it;
// none for a percentile the pooled sample is too small to hold (see
// Supports), so that no figure, interval or comparison is read from it.
func (g *Group) Values(m Metric) []float64 {
	if !g.Supports(m) {
		return nil
	}
	var out []float64
	for _, r := range g.Reps {
		if v, ok := r.Values[m]; ok {
			out = append(out, v)
		}
	}
	return out
}

// Sample returns the metric's value in each usable repetition that has
// it, with the deployment and round that measured it; none where Values
// has none.
func (g *Group) Sample(m Metric) Sample {
	if !g.Supports(m) {
		return nil
	}
	var out Sample
	for _, r := range g.Reps {
		if v, ok := r.Values[m]; ok {
			o := Obs{Deployment: r.Summary.DeploymentOf(), Round: r.Summary.Repetition, V: v}
			if r.Censored[m] {
				o.Bound = AtLeast
			}
			out = append(out, o)
		}
	}
	return out
}

// DistortedAtLeast is the highest value of a higher-is-better metric
// (a throughput) among the cells left out because their load generator
// set the pace: the generator, not the path, was the limit, so the path
// carries at least that much. ok is false when no such cell has it.
func (g *Group) DistortedAtLeast(m Metric) (v float64, ok bool) {
	if !m.HigherIsBetter() {
		return 0, false
	}
	for _, ex := range g.Excluded {
		if ex.Distorted == nil {
			continue
		}
		if x, has := ex.Distorted.Values[m]; has && (!ok || x > v) {
			v, ok = x, true
		}
	}
	return v, ok
}

// Estimate returns the metric's median over its units (see Sample.Units)
// with its distribution-free interval; N is zero when no repetition has
// it.
func (g *Group) Estimate(m Metric) Estimate {
	if e, ok := g.cache[m]; ok {
		return e
	}
	e := CensoredMedianCI(g.Sample(m).BoundedUnits())
	if g.cache == nil {
		g.cache = map[Metric]Estimate{}
	}
	g.cache[m] = e
	return e
}

// Requests is the number of served requests pooled over the usable
// repetitions (the pooled histogram's, which holds no failed request).
func (g *Group) Requests() int64 {
	if g.latency == nil {
		return 0
	}
	return g.latency.Count()
}

// Supports reports whether every usable repetition holds enough requests
// for the metric (Metric.MinRequests): a percentile's figure is the median
// of the repetitions' own percentiles, so each must hold it, whatever
// they pool to.
func (g *Group) Supports(m Metric) bool {
	need := m.MinRequests()
	for _, r := range g.Reps {
		if r.Counted < need {
			return false
		}
	}
	return true
}

// ClosedLoop reports whether the group's cells ran a closed loop: no rate
// offered, each connection sending when its last answer came. Its latency
// is its connections over its throughput (Little's law), so a difference
// in latency restates one in throughput.
func (g *Group) ClosedLoop() bool {
	if len(g.Reps) == 0 {
		return false
	}
	r := g.Reps[0]
	return r.Values[Offered] <= 0 && r.Load.Options.Rate <= 0
}

// Latency is the histogram of every request of every usable repetition,
// for percentile spectra; nil when there is none.
func (g *Group) Latency() *metrics.Histogram { return g.latency }

// Representative is the usable repetition whose p50 is the median one (the
// lower middle for an even count), for charts that show a single run.
func (g *Group) Representative() *Rep {
	if len(g.Reps) == 0 {
		return nil
	}
	rs := slices.Clone(g.Reps)
	slices.SortStableFunc(rs, func(a, b *Rep) int {
		switch va, vb := a.Values[P50], b.Values[P50]; {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
	return rs[(len(rs)-1)/2]
}

// Alloc returns the part's allocation in the representative repetition.
func (g *Group) Alloc(p Part) (Allocation, bool) {
	r := g.Representative()
	if r == nil {
		return Allocation{}, false
	}
	a, ok := r.Alloc[p]
	return a, ok
}

// add adds a repetition and its served requests' histogram; a Rep made
// without newRep counts the histogram's requests as its own.
func (g *Group) add(r *Rep, h *metrics.Histogram) {
	if r.Counted == 0 && h != nil {
		r.Counted = h.Count()
	}
	g.Reps = append(g.Reps, r)
	if g.latency == nil {
		g.latency = metrics.NewHistogram()
	}
	g.latency.Merge(h)
}
