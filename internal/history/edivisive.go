package history

import (
	"math"
	"math/rand/v2"
	"slices"
)

// E-divisive means (Matteson and James, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", JASA 2014), as
// MongoDB's performance CI used it (Daly et al., ICPE 2020) and Apache
// Otava keeps it: the series is split where the energy distance between
// the two sides, weighted by their sizes, is largest; a permutation test
// says whether that split is more than noise; accepted splits cut the
// series into segments, and each segment is searched again, until the
// best remaining split is not significant.
//
// For a segment x[s:e], a split at τ (the first point after the change)
// is scored against every end κ (s < τ < κ <= e):
//
//	Q(τ, κ) = m·n/(m+n) · ( 2/(m·n) Σ|X_i−Y_j| − Σ_{i<k}|X_i−X_k|/C(m,2) − Σ_{j<k}|Y_j−Y_k|/C(n,2) )
//
// with X = x[s:τ] of size m and Y = x[τ:κ] of size n, both at least
// MinSegment. Searching κ too, as Matteson and James and Otava do (and
// MongoDB's first implementation did not), finds a change that a later
// one undoes (a regression fixed in the next release): with Y running to
// the end, such a bump looks like noise to the permutation test.
// The permutation test shuffles the points within each segment
// the accepted change points make, takes the best split of the shuffled
// series the same way, and counts how often it scores at least as high:
// p = (1 + count) / (1 + Permutations), a valid p-value whatever the
// number of permutations.

// Detection's parameters.
const (
	// Alpha is the permutation test's significance level: a series with no
	// change gets a false change point with probability at most Alpha. It
	// is below 1 in 20, the false-alarm rate the history is held to, by
	// enough that a measurement of the rate (bench/changepoint) shows it
	// under, not at, the limit.
	Alpha = 0.04
	// Permutations per test; with p = (1+k)/(1+Permutations) the smallest
	// p-value is 0.001. Fewer would blur the smallest series' decisions:
	// eight runs split four and four can reach p = 2/70, and a p-value
	// estimated from 199 permutations lands above Alpha one time in four
	// when its true value is that.
	Permutations = 999
	// MinSegment is the fewest points on each side of a change point: one
	// point apart from the rest is an outlier, not a change, and a change
	// needs a second run after it to be told from one.
	MinSegment = 2
	// MaxSeries is the most points a series is searched over: the newest
	// ones (the dashboard still shows older points). It bounds the
	// search, whose time grows with the square of the points and the
	// permutations: a second or so for 200 points (bench/changepoint).
	MaxSeries = 200
)

// stopAt is the count of permutations scoring at least as high at which
// a test's p-value, (1+count)/(1+Permutations), is above Alpha.
var stopAt = int(math.Floor(Alpha*(1+Permutations) + 1e-9))

// split is one candidate change point: the first point after it, and its
// score.
type split struct {
	at int
	q  float64
}

// edivisive returns the significant change points of xs, in order, each
// the index of the first point after the change, with its p-value. The
// permutations draw from a generator seeded by seed, so that the same
// series always gives the same answer.
func edivisive(xs []float64, seed uint64) (at []int, p []float64) {
	if len(xs) < 2*MinSegment {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x65646976))
	shuffled := make([]float64, len(xs))
	var sc scratch
	var cuts []int // accepted change points, sorted
	for {
		best := sc.bestSplit(xs, cuts)
		if best.at < 0 {
			break
		}
		// The test stops as soon as the split cannot be significant: that
		// decides it as all the permutations would, for a fraction of
		// the work where there is no change.
		higher := 0
		for range Permutations {
			if higher >= stopAt {
				break
			}
			copy(shuffled, xs)
			bounds := segments(len(xs), cuts)
			for i := 1; i < len(bounds); i++ {
				seg := shuffled[bounds[i-1]:bounds[i]]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			if sc.bestSplit(shuffled, cuts).q >= best.q {
				higher++
			}
		}
		pv := float64(1+higher) / float64(1+Permutations)
		if pv > Alpha {
			break
		}
		i, _ := slices.BinarySearch(cuts, best.at)
		cuts = slices.Insert(cuts, i, best.at)
		p = slices.Insert(p, i, pv)
	}
	return cuts, p
}

// segments returns the bounds of the segments the cuts make: 0, the cuts,
// n.
func segments(n int, cuts []int) []int {
	return append(append([]int{0}, cuts...), n)
}

// scratch is the column sums' memory, kept between the permutations.
type scratch struct{ col []float64 }

// bestSplit is the highest-scoring split over every segment the cuts
// make, at -1 when no segment is long enough to split.
func (sc *scratch) bestSplit(xs []float64, cuts []int) split {
	best := split{at: -1}
	bounds := segments(len(xs), cuts)
	for i := 1; i < len(bounds); i++ {
		if s := sc.bestIn(xs[bounds[i-1]:bounds[i]]); s.at >= 0 && (best.at < 0 || s.q > best.q) {
			best = split{at: s.at + bounds[i-1], q: s.q}
		}
	}
	return best
}

// bestIn is the highest-scoring split of one segment, over every τ and
// κ, at -1 when the segment is shorter than two MinSegments. It takes
// O(n²) time and memory.
func (sc *scratch) bestIn(x []float64) split {
	n := len(x)
	best := split{at: -1}
	if n < 2*MinSegment {
		return best
	}
	// col(j)[i] is Σ_{i'<i} |x_i' − x_j|, so that a column's sum over a
	// range of rows is one subtraction.
	if cap(sc.col) < n*(n+1) {
		sc.col = make([]float64, n*(n+1))
	}
	flat := sc.col[:n*(n+1)]
	col := func(j int) []float64 { return flat[j*(n+1) : (j+1)*(n+1)] }
	for j := range n {
		c := col(j)
		c[0] = 0
		for i := range n {
			d := x[i] - x[j]
			if d < 0 {
				d = -d
			}
			c[i+1] = c[i] + d
		}
	}
	withinX := 0.0 // Σ_{i<k<τ} |x_i − x_k|
	for tau := 1; tau < n; tau++ {
		withinX += col(tau - 1)[tau-1]
		if tau < MinSegment {
			continue
		}
		m := float64(tau)
		// Y = x[τ:κ] grows by x[κ−1]: its distances to X are cross terms,
		// those to the rest of Y pairs within Y.
		cross, withinY := 0.0, 0.0
		for kappa := tau + 1; kappa <= n; kappa++ {
			c := col(kappa - 1)
			cross += c[tau]
			withinY += c[kappa-1] - c[tau]
			if kappa-tau < MinSegment {
				continue
			}
			ny := float64(kappa - tau)
			e := 2*cross/(m*ny) - withinX/(m*(m-1)/2) - withinY/(ny*(ny-1)/2)
			if q := m * ny / (m + ny) * e; best.at < 0 || q > best.q {
				best = split{at: tau, q: q}
			}
		}
	}
	return best
}
