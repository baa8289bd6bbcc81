package analysis

import (
	"math"
	"sync"
)

// The exact null distributions behind the distribution-free intervals and
// the gate's tests. Each is the count of equally likely outcomes with a
// given statistic, so that a level or a p-value is a sum of counts over
// their total, with no approximation where the counts are small enough to
// hold; beyond that, the normal approximation with a continuity
// correction, which at those sizes is within a few parts in ten thousand.

// exactLimit bounds the sample sizes whose distributions are counted: the
// signed-rank counts of n observations take n(n+1)/2 + 1 cells, the
// rank-sum counts of m and n take mn + 1.
const (
	exactSignedRank = 200
	exactRankSum    = 2500 // m·n
)

// binomialHalfCDF is P(X <= k) for X ~ Binomial(n, 1/2): the chance that
// at most k of n observations fall below their median.
func binomialHalfCDF(k, n int) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	// Sum the log-probabilities, which do not overflow for any n.
	var p float64
	for i := 0; i <= k; i++ {
		lg1, _ := math.Lgamma(float64(n + 1))
		lg2, _ := math.Lgamma(float64(i + 1))
		lg3, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lg1 - lg2 - lg3 - float64(n)*math.Ln2)
	}
	return min(p, 1)
}

var signedRankCache sync.Map // n -> []float64 cumulative probabilities

// signedRankCDF is P(T <= t) for Wilcoxon's signed-rank statistic T of n
// observations symmetric about zero: T is the sum of the ranks of the
// positive ones, each of the 2^n sign patterns equally likely.
func signedRankCDF(t, n int) float64 {
	m := n * (n + 1) / 2
	switch {
	case t < 0:
		return 0
	case t >= m:
		return 1
	case n > exactSignedRank:
		return signedRankNormal(t, n)
	}
	if c, ok := signedRankCache.Load(n); ok {
		return c.([]float64)[t]
	}
	// counts[s] is the number of subsets of {1..i} whose ranks sum to s,
	// scaled by 2^-i as i grows so that it stays a probability.
	counts := make([]float64, m+1)
	counts[0] = 1
	for i := 1; i <= n; i++ {
		for s := i * (i + 1) / 2; s >= i; s-- {
			counts[s] += counts[s-i]
		}
		for s := range counts[:i*(i+1)/2+1] {
			counts[s] /= 2
		}
	}
	cum := make([]float64, m+1)
	var acc float64
	for s, c := range counts {
		acc += c
		cum[s] = min(acc, 1)
	}
	signedRankCache.Store(n, cum)
	return cum[t]
}

type rankSumKey struct{ m, n int }

var rankSumCache sync.Map // rankSumKey -> []float64 cumulative probabilities

// rankSumCDF is P(U <= u) for the Mann-Whitney statistic U of samples of
// m and n from one continuous distribution: U counts the pairs in which
// the second sample's value is the larger, each of the C(m+n, m) orders
// equally likely.
func rankSumCDF(u, m, n int) float64 {
	switch {
	case u < 0:
		return 0
	case u >= m*n:
		return 1
	case m*n > exactRankSum:
		return rankSumNormal(u, m, n)
	}
	k := rankSumKey{min(m, n), max(m, n)}
	if c, ok := rankSumCache.Load(k); ok {
		return c.([]float64)[u]
	}
	// f[j][s]: the probability that U = s for samples of j and k.n, built
	// one observation of the smaller sample at a time.
	a, b := k.m, k.n
	prev := make([][]float64, b+1) // prev[l] for samples of j-1 and l
	for l := range prev {
		prev[l] = []float64{1}
	}
	for j := 1; j <= a; j++ {
		cur := make([][]float64, b+1)
		cur[0] = []float64{1}
		for l := 1; l <= b; l++ {
			// The largest of the j+l values is in the first sample with
			// probability j/(j+l), and then beats all l of the second: this
			// counts the pairs the first sample wins, which has U's
			// distribution, symmetric about j·l/2.
			dist := make([]float64, j*l+1)
			pj := float64(j) / float64(j+l)
			for s, p := range prev[l] {
				dist[s+l] += pj * p
			}
			for s, p := range cur[l-1] {
				dist[s] += (1 - pj) * p
			}
			cur[l] = dist
		}
		prev = cur
	}
	cum := make([]float64, a*b+1)
	var acc float64
	for s, p := range prev[b] {
		acc += p
		cum[s] = min(acc, 1)
	}
	rankSumCache.Store(k, cum)
	return cum[u]
}

// signedRankNormal and rankSumNormal are the normal approximations with
// a continuity correction, for samples too large to count.
func signedRankNormal(t, n int) float64 {
	mean := float64(n*(n+1)) / 4
	sd := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
	return normalCDF((float64(t) + 0.5 - mean) / sd)
}

func rankSumNormal(u, m, n int) float64 {
	mean := float64(m*n) / 2
	sd := math.Sqrt(float64(m*n*(m+n+1)) / 12)
	return normalCDF((float64(u) + 0.5 - mean) / sd)
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// symmetricRank is the largest k >= 1 such that an interval from the k-th
// smallest to the k-th largest of a statistic's values covers with at
// least the nominal level, given cdf(j) = P(the statistic <= j); when even
// k = 1 falls short, k is 1. level is the interval's exact coverage,
// 1 - 2·cdf(k-1).
func symmetricRank(cdf func(j int) float64, count int) (k int, level float64) {
	k = 1
	for k < (count+1)/2 && 1-2*cdf(k) >= Nominal {
		k++
	}
	return k, 1 - 2*cdf(k-1)
}
