package analysis

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Nominal is the confidence level every interval aims at. An interval
// whose design cannot reach it (too few units) carries the level it does
// reach, and reports show that level beside it.
const Nominal = 0.95

// levelSlack absorbs rounding in a computed level: 0.9499999 is 95%.
const levelSlack = 1e-9

// Estimate is a figure's point estimate with its distribution-free
// interval. Median is the estimate: the median of the units for a figure,
// the Hodges-Lehmann estimate for a difference. N is the number of
// independent units it rests on (deployments, or rounds of one
// deployment); Level is the interval's exact coverage, Nominal or more
// when the design reaches it, less when it cannot (three units give
// [min, max] at 75%). With fewer than two units there is no interval: Lo
// and Hi equal Median and Level is 0. MedianBound, LoBound and HiBound
// say which of the three numbers is only a bound, where it rests on
// censored figures (see Bound).
type Estimate struct {
	Median      float64 `json:"median"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
	N           int     `json:"n"`
	Level       float64 `json:"level"`
	MedianBound Bound   `json:"median_bound,omitempty"`
	LoBound     Bound   `json:"lo_bound,omitempty"`
	HiBound     Bound   `json:"hi_bound,omitempty"`
}

// Valid reports whether the estimate rests on at least one value.
func (e Estimate) Valid() bool { return e.N > 0 }

// Interval reports whether the estimate has a confidence interval.
func (e Estimate) Interval() bool { return e.N >= 2 && e.Level > 0 }

// BelowNominal reports whether the estimate's interval covers with less
// than the nominal level, which the design could not reach.
func (e Estimate) BelowNominal() bool { return e.Interval() && e.Level < Nominal-levelSlack }

func point(v float64, n int) Estimate { return Estimate{Median: v, Lo: v, Hi: v, N: n} }

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

// MedianCI is the median of xs with its distribution-free interval: the
// k-th smallest to the k-th largest value, k the largest for which the
// chance that the population median lies between them, 1 - 2·P(Bin(n, ½)
// < k), is at least Nominal (Conover, Practical Nonparametric
// Statistics, §3.2). It holds for any continuous distribution of
// independent values. Below six values no k reaches 95% and the interval
// is [min, max] at its own level: 50% for two, 75% for three, 87.5% for
// four, 93.75% for five.
func MedianCI(xs []float64) Estimate {
	n := len(xs)
	if n < 2 {
		return point(Median(xs), n)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k, level := symmetricRank(func(j int) float64 { return binomialHalfCDF(j, n) }, n)
	return Estimate{Median: sortedMedian(s), Lo: s[k-1], Hi: s[n-k], N: n, Level: level}
}

// ShiftCI is the center of a sample of differences (one per independent
// unit, such as a mesh's latency less the baseline's in one deployment)
// with Wilcoxon's signed-rank interval: the estimate is the
// Hodges-Lehmann median of the Walsh averages (dᵢ+dⱼ)/2, i <= j, and the
// interval runs from the k-th smallest to the k-th largest of them, k
// from the signed-rank statistic's exact distribution (Hollander & Wolfe,
// Nonparametric Statistical Methods, §3.2). It covers the center of any
// continuous distribution symmetric about it at the level stated.
func ShiftCI(ds []float64) Estimate {
	n := len(ds)
	if n < 2 {
		return point(Median(ds), n)
	}
	w := make([]float64, 0, n*(n+1)/2)
	for i, a := range ds {
		for _, b := range ds[i:] {
			w = append(w, (a+b)/2)
		}
	}
	slices.Sort(w)
	k, level := symmetricRank(func(j int) float64 { return signedRankCDF(j, n) }, len(w))
	return Estimate{Median: sortedMedian(w), Lo: w[k-1], Hi: w[len(w)-k], N: n, Level: level}
}

// ShiftBetween is how far b lies above a, two independent samples of
// units: the Hodges-Lehmann median of the differences bⱼ - aᵢ, with the
// interval from the k-th smallest to the k-th largest of them, k from the
// Mann-Whitney statistic's exact distribution (Hollander & Wolfe, §4.3).
// It covers the shift between two continuous distributions of one shape
// at the level stated. N is the smaller sample's size.
func ShiftBetween(a, b []float64) Estimate {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return Estimate{}
	}
	ds := make([]float64, 0, m*n)
	for _, x := range a {
		for _, y := range b {
			ds = append(ds, y-x)
		}
	}
	slices.Sort(ds)
	if m < 2 || n < 2 {
		return point(sortedMedian(ds), 1)
	}
	k, level := symmetricRank(func(j int) float64 { return rankSumCDF(j, m, n) }, len(ds))
	return Estimate{Median: sortedMedian(ds), Lo: ds[k-1], Hi: ds[len(ds)-k], N: min(m, n), Level: level}
}

// HigherP is the one-sided p-value of the Mann-Whitney test that b tends
// to be larger than a: the chance, were both from one distribution, of a
// statistic at least the one seen. A tie counts for a, which can only
// raise the p-value. 1 when either sample is empty.
func HigherP(a, b []float64) float64 {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 1
	}
	u := 0
	for _, x := range a {
		for _, y := range b {
			if y > x {
				u++
			}
		}
	}
	return 1 - rankSumCDF(u-1, m, n)
}

// MeanLevel is the two-sided level of the Student's t quantile MeanCI
// takes, on n units, for the interval it labels Nominal. Student's t at
// 95% is exact for normal units only: on skewed, heavy-tailed units like
// CPU per request it covers about 92% at five to seven units and, where
// the rare slow units start to enter the samples, less (91% at ten to
// thirty), and no correction read from the sample (Johnson's or Hall's
// skewness corrections, the bootstrap-t, a log-normal interval) reaches
// 95%, because most small samples hold none of the slow units that raise
// the mean. The levels are calibrated by simulation (bench/validity,
// docs/statistics.md): at each count, rounded up, the lowest at which the
// interval covers at least 95% on bench/validity's skewed model. On
// normal units it covers MeanLevel(n) itself, conservatively.
func MeanLevel(n int) float64 {
	for _, l := range meanLevels {
		if n <= l.upTo {
			return l.level
		}
	}
	return meanLevels[len(meanLevels)-1].level
}

// meanLevels are MeanLevel's steps: up to upTo units, level.
var meanLevels = []struct {
	upTo  int
	level float64
}{
	{3, 0.965}, {5, 0.972}, {7, 0.975}, {11, 0.98}, {40, 0.983}, {99, 0.978}, {math.MaxInt, 0.97},
}

// MeanCI is the mean of xs with a calibrated Student's t interval, for
// figures whose mean is the quantity wanted (a price is paid on mean use,
// not median use): the mean ± t · s/√n, t the Student's t quantile of a
// two-sided MeanLevel(n) interval on n-1 degrees of freedom, labelled
// Nominal (see MeanLevel for why, and bench/validity for its coverage).
func MeanCI(xs []float64) Estimate {
	return studentCI(xs, MeanLevel(len(xs)), Nominal)
}

// studentCI is the mean of xs with Student's t interval of two-sided
// level q on n-1 degrees of freedom, labelled level.
func studentCI(xs []float64, q, level float64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{}
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return point(mean, n)
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := StudentQuantile(q, n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return Estimate{Median: mean, Lo: mean - half, Hi: mean + half, N: n, Level: level}
}

// TQuantile is Student's t quantile for a two-sided Nominal interval on df
// degrees of freedom.
func TQuantile(df int) float64 { return StudentQuantile(Nominal, df) }

// StudentQuantile is Student's t quantile for a two-sided interval of
// level q on df degrees of freedom.
func StudentQuantile(q float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-q)/2)
}

// MinBatches and MaxBatches bound the batch means of a time series: two
// batches are the fewest with a spread (Student's t on one degree of
// freedom then makes the interval honestly wide), and more than the
// maximum make batches too short to outlast the series' correlation
// (Schmeiser, "Batch size effects in the analysis of simulation output",
// 1982: 10 to 30 batches).
const (
	MinBatches = 2
	MaxBatches = 10
)

// BatchMeansCI is the mean of a time series (such as 1-second CPU samples,
// each correlated with its neighbours) with the batch-means interval: the
// series is cut into b consecutive batches of equal length, whose means
// are nearly independent when a batch outlasts the correlation, and the
// interval is MeanCI's over the b batch means: Student's t on b-1 degrees
// of freedom at MeanLevel(b), whose margin over 95% also absorbs the
// correlation left between neighbouring batches of a few samples
// (bench/validity measures both). b is MaxBatches when the series has at least
// MaxBatches·minBatchLen samples, fewer for shorter series, and no
// interval below MinBatches batches of minBatchLen; samples that do not
// fill the last batch are left out of the interval but not of the mean.
func BatchMeansCI(xs []float64, minBatchLen int) Estimate {
	n := len(xs)
	var mean float64
	for _, x := range xs {
		mean += x
	}
	if n == 0 {
		return Estimate{}
	}
	mean /= float64(n)
	b := min(MaxBatches, n/max(1, minBatchLen))
	if b < MinBatches {
		return point(mean, 1)
	}
	size := n / b
	means := make([]float64, b)
	for i := range means {
		var s float64
		for _, x := range xs[i*size : (i+1)*size] {
			s += x
		}
		means[i] = s / float64(size)
	}
	e := MeanCI(means)
	half := (e.Hi - e.Lo) / 2
	return Estimate{Median: mean, Lo: mean - half, Hi: mean + half, N: b, Level: Nominal}
}

// Diff is the difference between two sets of units: Other minus Base, in
// the metric's unit (Delta) and in percent of Base (Pct), each with its
// interval, and the one-sided p-values of a rank test that Other is
// higher or lower, which the gate reads.
type Diff struct {
	Base  Estimate `json:"base"`
	Other Estimate `json:"other"`
	Delta Estimate `json:"delta"`
	Pct   Estimate `json:"pct"`
	// PHigher and PLower are the one-sided p-values that Other is above
	// or below Base; 1 without units to test.
	PHigher float64 `json:"p_higher"`
	PLower  float64 `json:"p_lower"`
}

// Measurable reports whether the difference's interval excludes zero at
// the nominal level. A difference without an interval, or one whose
// design reaches less than the nominal level, is not, and nor is one
// whose end beyond zero is only a bound on the wrong side (censored).
func (d Diff) Measurable() bool {
	v := Judge(d)
	return v == Higher || v == Lower
}

// Paired is the difference of a blocked design, other against base
// measured in the same rounds: each independent unit's difference (see
// Sample.PairUnits) with ShiftCI, in the unit and in percent of the
// unit's base.
func Paired(base, other Sample) Diff {
	pu := PairUnits(base, other)
	d := Diff{Base: CensoredMedianCI(base.BoundedUnits()), Other: CensoredMedianCI(other.BoundedUnits()), PHigher: 1, PLower: 1}
	if len(pu.Delta) == 0 {
		return d
	}
	d.Delta = censoredShiftCI(pu.Delta, pu.Bounds)
	if !slices.ContainsFunc(pu.Pct, math.IsNaN) {
		d.Pct = censoredShiftCI(pu.Pct, pu.Bounds)
	}
	d.PHigher, d.PLower = signedRankP(pu.Delta, 1), signedRankP(pu.Delta, -1)
	return d
}

// signedRankP is the one-sided p-value of Wilcoxon's signed-rank test
// that the differences' center lies above zero (sign 1) or below (-1).
// A zero difference counts against the alternative.
func signedRankP(ds []float64, sign float64) float64 {
	n := len(ds)
	if n == 0 {
		return 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Compare(math.Abs(ds[i]), math.Abs(ds[j])) })
	t := 0
	for r, i := range idx {
		if sign*ds[i] > 0 {
			t += r + 1
		}
	}
	return 1 - signedRankCDF(t-1, n)
}

// Between is the difference between two independent runs' units (see
// Sample.Units), bu less au: ShiftBetween in the unit, and in percent as
// the shift of the logarithms (a ratio) when every value is positive,
// else of the unit over au's median.
func Between(au, bu []float64) Diff { return BetweenBounded(au, nil, bu, nil) }

// BetweenBounded is Between over units some of which are bounds (ab[i]
// the bound of au[i], bb[j] of bu[j]; nil for none): a censored B unit
// makes a difference at least its value, a censored A unit at most.
func BetweenBounded(au []float64, ab []Bound, bu []float64, bb []Bound) Diff {
	d := Diff{Base: CensoredMedianCI(au, ab), Other: CensoredMedianCI(bu, bb), Delta: censoredShiftBetween(au, ab, bu, bb),
		PHigher: HigherP(au, bu), PLower: HigherP(bu, au)}
	if !d.Delta.Valid() {
		return d
	}
	positive := func(x float64) bool { return x > 0 }
	if all(au, positive) && all(bu, positive) {
		la, lb := logs(au), logs(bu)
		l := censoredShiftBetween(la, ab, lb, bb)
		f := func(x float64) float64 { return 100 * math.Expm1(x) }
		d.Pct = Estimate{Median: f(l.Median), Lo: f(l.Lo), Hi: f(l.Hi), N: l.N, Level: l.Level,
			MedianBound: l.MedianBound, LoBound: l.LoBound, HiBound: l.HiBound}
	} else if m := d.Base.Median; m != 0 {
		f := func(x float64) float64 { return 100 * x / math.Abs(m) }
		d.Pct = Estimate{Median: f(d.Delta.Median), Lo: f(d.Delta.Lo), Hi: f(d.Delta.Hi), N: d.Delta.N, Level: d.Delta.Level,
			MedianBound: d.Delta.MedianBound, LoBound: d.Delta.LoBound, HiBound: d.Delta.HiBound}
	}
	return d
}

func all(xs []float64, f func(float64) bool) bool {
	return !slices.ContainsFunc(xs, func(x float64) bool { return !f(x) })
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}
