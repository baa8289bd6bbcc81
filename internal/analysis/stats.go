package analysis

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples behind every interval.
const Resamples = 4000

// The bootstrap's generator is seeded with constants, so that the same
// results directory always gives the same report, whatever order the
// figures are computed in.
const seed1, seed2 = 0x6d657368, 0x62656e63

// Estimate is a median over repetitions with its 95% bootstrap interval.
// With fewer than two repetitions the interval is empty: Lo and Hi equal
// the median and Interval reports false.
type Estimate struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	N      int     `json:"n"`
}

// Valid reports whether the estimate rests on at least one value.
func (e Estimate) Valid() bool { return e.N > 0 }

// Interval reports whether the estimate has a confidence interval.
func (e Estimate) Interval() bool { return e.N >= 2 }

// Median returns the median of xs, or NaN when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianCI returns the median of xs with a percentile-bootstrap 95%
// interval: the median of Resamples resamples drawn with replacement.
func MedianCI(xs []float64) Estimate {
	e := Estimate{Median: Median(xs), N: len(xs)}
	e.Lo, e.Hi = e.Median, e.Median
	if len(xs) < 2 {
		return e
	}
	rng := newRNG()
	stats := make([]float64, Resamples)
	buf := make([]float64, len(xs))
	for i := range stats {
		stats[i] = resampleMedian(rng, xs, buf)
	}
	e.Lo, e.Hi = percentileInterval(stats)
	return e
}

// MinRunsForDifference is the fewest usable repetitions each side needs
// before a difference gets an interval. With two, a percentile bootstrap
// can only shuffle the two values and calls almost any gap measurable.
const MinRunsForDifference = 3

// Diff is the difference between two sets of repetitions: Other minus
// Base, in the metric's unit and in percent of Base, each with a 95%
// interval from bootstrapping the difference of medians.
type Diff struct {
	Base  Estimate `json:"base"`
	Other Estimate `json:"other"`
	Delta Estimate `json:"delta"`
	Pct   Estimate `json:"pct"`
}

// Measurable reports whether the difference's interval excludes zero.
// A difference without an interval (too few repetitions) is not.
func (d Diff) Measurable() bool {
	return d.Delta.Interval() && (d.Delta.Lo > 0 || d.Delta.Hi < 0)
}

// Difference bootstraps median(other) - median(base), resampling each side
// independently.
func Difference(base, other []float64) Diff {
	d := Diff{Base: MedianCI(base), Other: MedianCI(other)}
	n := min(len(base), len(other))
	if n == 0 {
		return d
	}
	d.Delta = Estimate{Median: d.Other.Median - d.Base.Median, N: n}
	d.Pct = Estimate{Median: pct(d.Delta.Median, d.Base.Median), N: n}
	d.Delta.Lo, d.Delta.Hi = d.Delta.Median, d.Delta.Median
	d.Pct.Lo, d.Pct.Hi = d.Pct.Median, d.Pct.Median
	if len(base) < MinRunsForDifference || len(other) < MinRunsForDifference {
		d.Delta.N, d.Pct.N = 1, 1 // too few runs for an interval worth having
		return d
	}
	rng := newRNG()
	deltas := make([]float64, Resamples)
	pcts := make([]float64, Resamples)
	bb, ob := make([]float64, len(base)), make([]float64, len(other))
	for i := range deltas {
		mb := resampleMedian(rng, base, bb)
		mo := resampleMedian(rng, other, ob)
		deltas[i] = mo - mb
		pcts[i] = pct(mo-mb, mb)
	}
	d.Delta.Lo, d.Delta.Hi = percentileInterval(deltas)
	d.Pct.Lo, d.Pct.Hi = percentileInterval(pcts)
	return d
}

func pct(delta, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 100 * delta / base
}

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(seed1, seed2)) }

func resampleMedian(rng *rand.Rand, xs, buf []float64) float64 {
	for i := range buf {
		buf[i] = xs[rng.IntN(len(xs))]
	}
	slices.Sort(buf)
	return sortedMedian(buf)
}

// percentileInterval returns the 2.5th and 97.5th percentiles of stats,
// which it sorts. NaNs (a percentage of a zero base) sort first, as
// cmp.Compare orders them, and are skipped.
func percentileInterval(stats []float64) (lo, hi float64) {
	slices.SortFunc(stats, cmp.Compare[float64])
	i := 0
	for i < len(stats) && math.IsNaN(stats[i]) {
		i++
	}
	s := stats[i:]
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(s))
	return s[int(math.Floor(0.025*n))], s[int(math.Ceil(0.975*n))-1]
}
