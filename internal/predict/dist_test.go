package predict

import (
	"math"
	"testing"
)

func uniform(a, b float64) Dist {
	return FromQuantile(func(p float64) float64 { return a + (b-a)*p })
}

func constant(v float64) Dist { return FromQuantile(func(float64) float64 { return v }) }

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	}
}

func TestSumOfConstantsIsTheirSum(t *testing.T) {
	d := constant(1.5).Sum(constant(2))
	for _, q := range []float64{0.01, 0.5, 0.99} {
		near(t, "quantile", d.Quantile(q), 3.5, 1e-12)
	}
}

// Two independent uniforms on [0,1] sum to the triangular distribution on
// [0,2]: median 1, p95 = 2 - sqrt(0.1), p5 = sqrt(0.1).
func TestSumOfUniformsIsTriangular(t *testing.T) {
	d := uniform(0, 1).Sum(uniform(0, 1))
	near(t, "p50", d.Quantile(0.5), 1, 0.01)
	near(t, "p95", d.Quantile(0.95), 2-math.Sqrt(0.1), 0.01)
	near(t, "p05", d.Quantile(0.05), math.Sqrt(0.1), 0.01)
}

// The sum of two independent exponentials of mean 1 is Gamma(2, 1), whose
// median is 1.67835 and p99 6.63835.
func TestSumOfExponentialsIsGamma(t *testing.T) {
	exp := FromQuantile(func(p float64) float64 { return -math.Log(1 - p) })
	d := exp.Sum(exp)
	near(t, "p50", d.Quantile(0.5), 1.67835, 0.02)
	near(t, "p99", d.Quantile(0.99), 6.63835, 0.35) // the tails' points are coarse
}

// The maximum of two independent uniforms on [0,1] has CDF x², so its
// quantile at p is sqrt(p).
func TestMaxOfUniforms(t *testing.T) {
	d := uniform(0, 1).Max(uniform(0, 1))
	for _, q := range []float64{0.1, 0.5, 0.9, 0.99} {
		near(t, "quantile", d.Quantile(q), math.Sqrt(q), 0.01)
	}
}

func TestMaxOfConstantsIsTheLarger(t *testing.T) {
	near(t, "p50", constant(1).Max(constant(3)).Quantile(0.5), 3, 1e-12)
}

// A call made half the time: half the mass at 0, half at its latency.
func TestMixWithNothing(t *testing.T) {
	d := Mix([]float64{0.5, 0.5}, []Dist{constant(2), Zero()})
	near(t, "p25", d.Quantile(0.25), 0, 1e-12)
	near(t, "p75", d.Quantile(0.75), 2, 1e-12)
	near(t, "mean", d.Mean(), 1, 0.01)
	// Weights need not sum to 1: 1 and 3 are a quarter and three quarters.
	d = Mix([]float64{1, 3}, []Dist{constant(10), constant(20)})
	near(t, "p20", d.Quantile(0.2), 10, 1e-12)
	near(t, "p30", d.Quantile(0.3), 20, 1e-12)
}

func TestFromQuantileSortsANonMonotoneDifference(t *testing.T) {
	d := FromQuantile(func(p float64) float64 { return math.Sin(10 * p) })
	for i := 1; i < len(d); i++ {
		if d[i] < d[i-1] {
			t.Fatalf("not sorted at %d: %v < %v", i, d[i], d[i-1])
		}
	}
}
