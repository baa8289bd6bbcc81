package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/meshbench/meshbench/internal/analysis"
)

// Time series: istiod's CPU every second over the control-plane study's
// churn, and each component's CPU every half second over a profile cell,
// take analysis.BatchMeansCI. series simulates them as AR(1) series,
// x[t] = μ + φ(x[t-1] - μ) + e[t], started in their stationary
// distribution, and measures how often the interval covers μ: at the
// study's own lengths and minimum batch, with a lag-one correlation of
// 0.5 (a sample shares about a third of its variance with the next two)
// and, to show where batch means stop holding, 0.8; and 0 for reference.

type seriesCase struct {
	name              string
	samples, minBatch int
	phi               float64
	// stress marks a correlation beyond the batches' reach, shown to
	// say where batch means stop holding, not judged.
	stress bool
}

var seriesCases = []seriesCase{
	// The control-plane study's churn: 16 changes a second apart, one
	// sample a second, batches of at least 5 s (cpstudy.minBatchSamples).
	{"control plane: 16 1-s samples", 16, 5, 0, false},
	{"control plane: 16 1-s samples", 16, 5, 0.5, false},
	{"control plane: 16 1-s samples", 16, 5, 0.8, true},
	// A profile cell: 4 s of half-second samples, batches of at least two
	// seconds (predict.batchSamples).
	{"predictor: 8 half-second samples", 8, 4, 0, false},
	{"predictor: 8 half-second samples", 8, 4, 0.5, false},
	{"predictor: 8 half-second samples", 8, 4, 0.8, true},
	// A long series: ten batches (MaxBatches) of six.
	{"a minute of 1-s samples", 60, 5, 0.5, false},
	{"a minute of 1-s samples", 60, 5, 0.8, true},
}

func ar1(r *rand.Rand, n int, phi float64) []float64 {
	xs := make([]float64, n)
	x := r.NormFloat64() // stationary: unit variance
	innov := math.Sqrt(1 - phi*phi)
	for i := range xs {
		xs[i] = x
		x = phi*x + innov*r.NormFloat64()
	}
	return xs
}

// batchStudent is Student's t at 95% over the same batch means as
// BatchMeansCI, for comparison.
func batchStudent(xs []float64, minBatch int) (lo, hi float64) {
	b := min(analysis.MaxBatches, len(xs)/minBatch)
	size := len(xs) / b
	means := make([]float64, b)
	for i := range means {
		for _, x := range xs[i*size : (i+1)*size] {
			means[i] += x / float64(size)
		}
	}
	_, se := meanSE(means)
	var mean float64
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	h := analysis.TQuantile(b-1) * se
	return mean - h, mean + h
}

func series(out io.Writer, r *rand.Rand, trials int) int {
	failed := 0
	fmt.Fprintln(out, "\ntime series: BatchMeansCI on AR(1) series of lag-one correlation phi, as many a case; Student's t at 95% over the same batch means beside it; width the mean half-width in samples' standard deviations")
	fmt.Fprintf(out, "%-34s %7s %5s %8s %9s %10s %6s  %s\n", "series", "batches", "phi", "shown", "coverage", "t at 95%", "width", "done-when")
	for _, c := range seriesCases {
		hit, plain := 0, 0
		var e analysis.Estimate
		// width is the mean half-width in the samples' standard deviation
		// (1): what fewer, longer batches cost.
		var width float64
		for range trials {
			xs := ar1(r, c.samples, c.phi)
			e = analysis.BatchMeansCI(xs, c.minBatch)
			if e.Lo <= 0 && 0 <= e.Hi {
				hit++
			}
			width += (e.Hi - e.Lo) / 2 / float64(trials)
			if lo, hi := batchStudent(xs, c.minBatch); lo <= 0 && 0 <= hi {
				plain++
			}
		}
		cov := float64(hit) / float64(trials)
		ok := passes(cov, e.Level)
		v := verdict(ok)
		switch {
		case c.stress:
			v = "stress, not judged"
		case !ok:
			failed++
		}
		fmt.Fprintf(out, "%-34s %7d %5.1f %7.2f%% %8.2f%% %9.2f%% %6.2f  %s\n", c.name, e.N, c.phi, 100*e.Level, 100*cov, 100*float64(plain)/float64(trials), width, v)
	}
	return failed
}
