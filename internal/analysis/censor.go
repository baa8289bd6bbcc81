package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Censoring. A request that failed or timed out has no latency of its
// own, only the knowledge that it was not served within the cell's
// timeout. Leaving it out of the distribution would make a mesh that
// times out 0.09% of its requests look faster at p99.9 than one that
// serves them slowly, so each repetition's percentiles are read off its
// served latencies with every failed request added at the timeout. A
// percentile that lands on those requests is censored: the true figure is
// at least the timeout, and the figure is shown as "≥ x". A bound carries
// into the medians, intervals and differences read from it (a censored
// baseline makes a difference at most its value, "≤ x"), and a
// difference whose interval end is only a bound on the wrong side of zero
// is not called measurable (Judge).

// Bound says what a censored figure's number is: the figure itself
// (Exact), or only a bound on it.
type Bound string

// Bounds.
const (
	Exact Bound = ""
	// AtLeast: the figure is at least the number (a percentile that
	// landed on requests censored at the timeout).
	AtLeast Bound = "at_least"
	// AtMost: the figure is at most the number (a difference less a
	// censored figure).
	AtMost Bound = "at_most"
	// Unbounded: the number rests on figures censored both ways (a
	// censored mesh less a censored baseline) and bounds the figure on
	// neither side.
	Unbounded Bound = "unbounded"
)

// negated is the bound of a figure subtracted: at least x is at most -x.
func (b Bound) negated() Bound {
	switch b {
	case AtLeast:
		return AtMost
	case AtMost:
		return AtLeast
	}
	return b
}

// joinBounds is the bound of a sum or mean of two figures with bounds a
// and b.
func joinBounds(a, b Bound) Bound {
	switch {
	case a == Exact:
		return b
	case b == Exact, a == b:
		return a
	}
	return Unbounded
}

// lowerBounds reports whether a number with bound b shows that the figure
// is at least the number: exact, or at least.
func (b Bound) lowerBounds() bool { return b == Exact || b == AtLeast }

// upperBounds reports whether a number with bound b shows that the figure
// is at most the number.
func (b Bound) upperBounds() bool { return b == Exact || b == AtMost }

// Censored reports whether any of the estimate's numbers is only a bound.
func (e Estimate) Censored() bool {
	return e.MedianBound != Exact || e.LoBound != Exact || e.HiBound != Exact
}

// censoredLatency is a repetition's latency distribution for its
// percentiles: the served requests' histogram with the failed ones added
// at the timeout (at the longest served latency when no timeout is
// recorded).
func censoredLatency(served *metrics.Histogram, failed int64, timeout time.Duration) *metrics.Histogram {
	h := metrics.NewHistogram()
	h.Merge(served)
	if failed > 0 {
		if timeout <= 0 {
			timeout = served.Max()
		}
		h.RecordN(timeout, failed)
	}
	return h
}

// censoredAt reports whether percentile p of a distribution of total
// requests, served of them served, lands on the failed ones, which
// censoredLatency put above every served one: the rank HdrHistogram reads
// the percentile at is beyond the served.
func censoredAt(p float64, total, served int64) bool {
	if total <= served {
		return false
	}
	rank := max(1, int64(p/100*float64(total)+0.5))
	return rank > served
}

// boundedValue is one value with its bound, for sorting.
type boundedValue struct {
	v float64
	b Bound
}

func sortBounded(xs []float64, bs []Bound) []boundedValue {
	out := make([]boundedValue, len(xs))
	for i, x := range xs {
		out[i].v = x
		if i < len(bs) {
			out[i].b = bs[i]
		}
	}
	slices.SortStableFunc(out, func(a, b boundedValue) int { return cmp.Compare(a.v, b.v) })
	return out
}

// boundAt is the bound of the i-th sorted value: of every value tied with
// it, since ties leave their order open.
func boundAt(s []boundedValue, i int) Bound {
	b := s[i].b
	for j := i - 1; j >= 0 && s[j].v == s[i].v; j-- {
		b = joinBounds(b, s[j].b)
	}
	for j := i + 1; j < len(s) && s[j].v == s[i].v; j++ {
		b = joinBounds(b, s[j].b)
	}
	return b
}

func boundedMedian(s []boundedValue) (float64, Bound) {
	n := len(s)
	if n%2 == 1 {
		return s[n/2].v, boundAt(s, n/2)
	}
	return (s[n/2-1].v + s[n/2].v) / 2, joinBounds(boundAt(s, n/2-1), boundAt(s, n/2))
}

// medianBounded is the median of values with bounds, and its bound.
func medianBounded(xs []float64, bs []Bound) (float64, Bound) {
	if len(xs) == 0 {
		return math.NaN(), Exact
	}
	return boundedMedian(sortBounded(xs, bs))
}

func anyBound(bs []Bound) bool {
	return slices.ContainsFunc(bs, func(b Bound) bool { return b != Exact })
}

// CensoredMedianCI is MedianCI over values some of which are bounds
// (bs[i] the bound of xs[i]; nil for none): the same median and interval,
// each number carrying the bound of the value it is.
func CensoredMedianCI(xs []float64, bs []Bound) Estimate {
	e := MedianCI(xs)
	if !anyBound(bs) || len(xs) == 0 {
		return e
	}
	return withBounds(e, sortBounded(xs, bs))
}

// withBounds marks an estimate read off sorted values with the bounds of
// the values its median and ends are.
func withBounds(e Estimate, s []boundedValue) Estimate {
	_, e.MedianBound = boundedMedian(s)
	if !e.Interval() {
		e.LoBound, e.HiBound = e.MedianBound, e.MedianBound
		return e
	}
	e.LoBound, e.HiBound = boundOf(s, e.Lo), boundOf(s, e.Hi)
	return e
}

// boundOf is the bound of the sorted values equal to v.
func boundOf(s []boundedValue, v float64) Bound {
	i, found := slices.BinarySearchFunc(s, v, func(x boundedValue, t float64) int { return cmp.Compare(x.v, t) })
	if !found {
		return Exact
	}
	return boundAt(s, i)
}

// censoredShiftCI is ShiftCI over differences some of which are bounds:
// each Walsh average carries the bounds of the two it averages.
func censoredShiftCI(ds []float64, bs []Bound) Estimate {
	e := ShiftCI(ds)
	if !anyBound(bs) || len(ds) == 0 {
		return e
	}
	w := make([]boundedValue, 0, len(ds)*(len(ds)+1)/2)
	for i, a := range ds {
		for j := i; j < len(ds); j++ {
			w = append(w, boundedValue{(a + ds[j]) / 2, joinBounds(bs[i], bs[j])})
		}
	}
	slices.SortStableFunc(w, func(a, b boundedValue) int { return cmp.Compare(a.v, b.v) })
	return withBounds(e, w)
}

// censoredShiftBetween is ShiftBetween over units some of which are
// bounds: each difference bⱼ - aᵢ carries bⱼ's bound and aᵢ's negated.
func censoredShiftBetween(a []float64, ab []Bound, b []float64, bb []Bound) Estimate {
	e := ShiftBetween(a, b)
	if (!anyBound(ab) && !anyBound(bb)) || !e.Valid() {
		return e
	}
	at := func(bs []Bound, i int) Bound {
		if i < len(bs) {
			return bs[i]
		}
		return Exact
	}
	ds := make([]boundedValue, 0, len(a)*len(b))
	for i, x := range a {
		for j, y := range b {
			ds = append(ds, boundedValue{y - x, joinBounds(at(bb, j), at(ab, i).negated())})
		}
	}
	slices.SortStableFunc(ds, func(p, q boundedValue) int { return cmp.Compare(p.v, q.v) })
	return withBounds(e, ds)
}

// BoundedUnits are the sample's units (see Units) with each one's bound:
// a deployment's median carries the bound of the repetitions it is.
func (s Sample) BoundedUnits() ([]float64, []Bound) {
	by := s.byDeployment()
	if len(by) <= 1 {
		bs := make([]Bound, len(s))
		for i, o := range s {
			bs[i] = o.Bound
		}
		return s.Values(), bs
	}
	var vs []float64
	var bs []Bound
	for _, d := range slices.Sorted(maps.Keys(by)) {
		obs := by[d]
		x := make([]float64, len(obs))
		b := make([]Bound, len(obs))
		for i, o := range obs {
			x[i], b[i] = o.V, o.Bound
		}
		v, bd := medianBounded(x, b)
		vs, bs = append(vs, v), append(bs, bd)
	}
	return vs, bs
}
