package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
)

// A price is the mean over the deployments (a bill is paid on mean use),
// and no interval for a mean is distribution-free. priceMethods measures
// MeanCI beside the candidates it was chosen from, on the same simulated
// samples: Student's t at 95% (exact for normal units), Johnson's
// skewness-corrected t, the bootstrap-t (equal-tailed and symmetric), on
// the skewed model and on normal units of the same mean and spread. Each
// method's width is its mean width over Student's t's.

// bootResamples is the bootstrap's resamples a sample.
const bootResamples = 999

type priceMethod struct {
	name string
	ci   func(xs []float64, boot *bootstrap) (lo, hi float64)
	// boot marks the bootstrap's methods, which are left out below five
	// units: one resample of three in nine has no spread, and those
	// with little make the interval's width unbounded.
	boot bool
}

var priceMethodList = []priceMethod{
	{"Student's t, 95%", func(xs []float64, _ *bootstrap) (float64, float64) {
		e := studentAt(xs, analysis.Nominal)
		return e.Lo, e.Hi
	}, false},
	{"MeanCI: calibrated Student's t", func(xs []float64, _ *bootstrap) (float64, float64) {
		e := analysis.MeanCI(xs)
		return e.Lo, e.Hi
	}, false},
	{"Johnson's t (skewness-corrected)", johnson, false},
	{"Hall's t (skewness transformation)", hall, false},
	{"Cox's log-normal interval", cox, false},
	{"bootstrap-t, equal-tailed", func(xs []float64, b *bootstrap) (float64, float64) {
		m, se := meanSE(xs)
		return m - b.quantile(0.975)*se, m - b.quantile(0.025)*se
	}, true},
	{"bootstrap-t, symmetric", func(xs []float64, b *bootstrap) (float64, float64) {
		m, se := meanSE(xs)
		q := b.absQuantile(0.95)
		return m - q*se, m + q*se
	}, true},
}

// studentAt is Student's t interval at a two-sided level.
func studentAt(xs []float64, level float64) analysis.Estimate {
	m, se := meanSE(xs)
	h := analysis.StudentQuantile(level, len(xs)-1) * se
	return analysis.Estimate{Median: m, Lo: m - h, Hi: m + h, N: len(xs), Level: level}
}

func meanSE(xs []float64) (mean, se float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x / n
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// johnson is Johnson's modified t (Johnson, "Modified t tests and
// confidence intervals for asymmetrical populations", JASA 1978): the
// interval moves by the sample's third central moment, μ̂₃/(6s²n).
func johnson(xs []float64, _ *bootstrap) (float64, float64) {
	m, se := meanSE(xs)
	n := float64(len(xs))
	var m3, ss float64
	for _, x := range xs {
		m3 += math.Pow(x-m, 3) / n
		ss += (x - m) * (x - m)
	}
	s2 := ss / (n - 1)
	c := m + m3/(6*s2*n)
	h := analysis.TQuantile(len(xs)-1) * se
	return c - h, c + h
}

// hall is Hall's transformation of the t statistic that removes its
// skewness (Hall, "On the removal of skewness by transformation", JRSS B
// 1992, in the form Zhou and Dinh give, Statistica Sinica 2005): with
// γ̂ the sample's skewness and a = γ̂/(3√n), g(T) = ((1 + aT)³ - 1)/(3a)
// + γ̂/(6√n), monotone, inverted at Student's quantiles.
func hall(xs []float64, _ *bootstrap) (float64, float64) {
	m, se := meanSE(xs)
	n := float64(len(xs))
	var m3, ss float64
	for _, x := range xs {
		m3 += math.Pow(x-m, 3) / n
		ss += (x - m) * (x - m)
	}
	g := m3 / math.Pow(ss/(n-1), 1.5)
	q := analysis.TQuantile(len(xs) - 1)
	if g == 0 {
		return m - q*se, m + q*se
	}
	inv := func(x float64) float64 {
		return 3 * math.Sqrt(n) / g * (math.Cbrt(1+g/math.Sqrt(n)*(x-g/(6*math.Sqrt(n)))) - 1)
	}
	return m - inv(q)*se, m - inv(-q)*se
}

// cox is the modified Cox interval for a log-normal mean (Zhou and Gao,
// "Confidence intervals for the log-normal mean", Statistics in Medicine
// 1997): exp(ȳ + s²/2 ± t·√(s²/n + s⁴/(2(n-1)))) over the logs y.
func cox(xs []float64, _ *bootstrap) (float64, float64) {
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = math.Log(x)
	}
	m, se := meanSE(ys)
	n := float64(len(xs))
	s2 := se * se * n
	c := m + s2/2
	h := analysis.TQuantile(len(xs)-1) * math.Sqrt(s2/n+s2*s2/(2*(n-1)))
	return math.Exp(c - h), math.Exp(c + h)
}

// bootstrap holds one sample's bootstrap-t statistics, (mean* - mean) /
// se*, over resamples with a spread.
type bootstrap struct{ ts, abs []float64 }

func newBootstrap(r *rand.Rand, xs []float64) *bootstrap {
	m, _ := meanSE(xs)
	b := &bootstrap{}
	ys := make([]float64, len(xs))
	for range bootResamples {
		for i := range ys {
			ys[i] = xs[r.IntN(len(xs))]
		}
		mm, se := meanSE(ys)
		if se == 0 {
			continue // every draw one value: no t
		}
		t := (mm - m) / se
		b.ts, b.abs = append(b.ts, t), append(b.abs, math.Abs(t))
	}
	slices.Sort(b.ts)
	slices.Sort(b.abs)
	return b
}

func (b *bootstrap) quantile(p float64) float64    { return order(b.ts, p) }
func (b *bootstrap) absQuantile(p float64) float64 { return order(b.abs, p) }

func order(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// priceMethods prints the candidates' coverage and relative width; it
// fails nothing (MeanCI's row in the first table does).
func priceMethods(out io.Writer, r *rand.Rand, trials int, skewedMean float64) int {
	n := max(100, trials/4)
	// The normal units have the skewed model's mean and spread.
	var sd float64
	{
		xs := sample(r, 200000, sidecar.draw)
		m, _ := meanSE(xs)
		for _, x := range xs {
			sd += (x - m) * (x - m) / float64(len(xs)-1)
		}
		sd = math.Sqrt(sd)
	}
	pops := []struct {
		name  string
		draw  func(*rand.Rand) float64
		truth float64
	}{
		{"skewed", sidecar.draw, skewedMean},
		{"normal", func(r *rand.Rand) float64 { return skewedMean + sd*r.NormFloat64() }, skewedMean},
	}
	fmt.Fprintf(out, "\nprice: the mean's interval, %d simulated studies a case, %d bootstrap resamples (the bootstrap-t from five units: below, a resample without spread is too likely);\nwidth is the mean width over Student's t's\n", n, bootResamples)
	fmt.Fprintf(out, "%-34s %-26s %8s %9s %7s\n", "method", "design", "units", "coverage", "width")
	for _, p := range pops {
		for _, d := range designs {
			hits := make([]int, len(priceMethodList))
			widths := make([]float64, len(priceMethodList))
			for range n {
				xs := sample(r, d.units, p.draw)
				boot := newBootstrap(r, xs)
				for i, m := range priceMethodList {
					if m.boot && d.units < 5 {
						continue
					}
					lo, hi := m.ci(xs, boot)
					widths[i] += hi - lo
					if lo <= p.truth && p.truth <= hi {
						hits[i]++
					}
				}
			}
			for i, m := range priceMethodList {
				if m.boot && d.units < 5 {
					continue // see the header
				}
				fmt.Fprintf(out, "%-34s %-26s %8s %8.2f%% %6.2fx\n", m.name, d.name, p.name, 100*float64(hits[i])/float64(n), widths[i]/widths[0])
			}
		}
	}
	// Beyond the presets' counts: Student's t falls further short where
	// the slow units start to enter the samples (ten to thirty units),
	// and MeanLevel rises to meet it.
	fmt.Fprintf(out, "\nprice at more units: MeanCI and Student's t at 95%% on the skewed model, %d simulated studies a count\n", n)
	fmt.Fprintf(out, "%-8s %10s %9s %11s %7s\n", "units", "MeanLevel", "MeanCI", "Student's t", "width")
	for _, units := range []int{2, 10, 20, 40, 100} {
		hit, plain := 0, 0
		var w, pw float64
		for range n {
			xs := sample(r, units, sidecar.draw)
			e, p := analysis.MeanCI(xs), studentAt(xs, analysis.Nominal)
			w, pw = w+e.Hi-e.Lo, pw+p.Hi-p.Lo
			if e.Lo <= skewedMean && skewedMean <= e.Hi {
				hit++
			}
			if p.Lo <= skewedMean && skewedMean <= p.Hi {
				plain++
			}
		}
		fmt.Fprintf(out, "%-8d %9.1f%% %8.2f%% %10.2f%% %6.2fx\n", units, 100*analysis.MeanLevel(units), 100*float64(hit)/float64(n), 100*float64(plain)/float64(n), w/pw)
	}
	return 0
}
