package analysis

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"one", []float64{7}, 7},
	}
	for _, tt := range tests {
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("%s: Median(%v) = %v, want %v", tt.name, tt.xs, got, tt.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// seq is 1..n, shuffled so that no method can rely on sorted input.
func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(n - i)
	}
	return xs
}

// TestMedianCILevels checks the order-statistic interval's ranks and
// exact levels: [min, max] below six values at 1 - 2^(1-n), and the
// binomial ranks above.
func TestMedianCILevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n      int
		lo, hi float64 // ranks, for the values 1..n
		level  float64
	}{
		{2, 1, 2, 0.5},
		{3, 1, 3, 0.75},
		{4, 1, 4, 0.875},
		{5, 1, 5, 0.9375},
		{6, 1, 6, 0.96875},
		{8, 1, 8, 1 - 2.0/256},
		{9, 2, 8, 1 - 2*10.0/512},
		{10, 2, 9, 1 - 2*11.0/1024},
		{20, 6, 15, 1 - 2*binomialHalfCDF(5, 20)},
	}
	for _, tt := range tests {
		e := MedianCI(seq(tt.n))
		if e.Lo != tt.lo || e.Hi != tt.hi || !near(e.Level, tt.level) || e.N != tt.n {
			t.Errorf("n=%d: [%v, %v] at %v (N %d), want [%v, %v] at %v", tt.n, e.Lo, e.Hi, e.Level, e.N, tt.lo, tt.hi, tt.level)
		}
		if e.BelowNominal() != (tt.level < Nominal) {
			t.Errorf("n=%d: BelowNominal %v at level %v", tt.n, e.BelowNominal(), e.Level)
		}
	}
	// n = 20: the next rank in would fall below 95%.
	if l := 1 - 2*binomialHalfCDF(6, 20); l >= Nominal {
		t.Errorf("rank 7 of 20 covers %v, so rank 6 is not the largest", l)
	}
	if e := MedianCI([]float64{5}); e.Interval() || e.Median != 5 || e.N != 1 {
		t.Errorf("one value: %+v, want no interval", e)
	}
}

// bruteSignedRank counts the sign patterns of n ranks whose positive
// ranks sum to at most t.
func bruteSignedRank(t, n int) float64 {
	count := 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += i + 1
			}
		}
		if s <= t {
			count++
		}
	}
	return float64(count) / float64(int(1)<<n)
}

// bruteRankSum counts the ways of choosing which m of m+n ordered values
// form the first sample with U (pairs the second sample wins) at most u.
func bruteRankSum(u, m, n int) float64 {
	total, count := 0, 0
	for mask := 0; mask < 1<<(m+n); mask++ {
		if bits.OnesCount(uint(mask)) != m {
			continue
		}
		total++
		// Values ranked 0..m+n-1; bit set: in the first sample.
		wins, seconds := 0, 0
		for i := m + n - 1; i >= 0; i-- {
			if mask&(1<<i) != 0 {
				wins += seconds // every larger second-sample value beats it
			} else {
				seconds++
			}
		}
		if wins <= u {
			count++
		}
	}
	return float64(count) / float64(total)
}

func TestExactDistributions(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 10; n++ {
		for s := -1; s <= n*(n+1)/2; s++ {
			if got, want := signedRankCDF(s, n), bruteSignedRank(s, n); !near(got, want) {
				t.Fatalf("signed rank n=%d: P(T <= %d) = %v, want %v", n, s, got, want)
			}
		}
	}
	for m := 1; m <= 6; m++ {
		for n := 1; n <= 6; n++ {
			for u := -1; u <= m*n; u++ {
				if got, want := rankSumCDF(u, m, n), bruteRankSum(u, m, n); !near(got, want) {
					t.Fatalf("rank sum %d,%d: P(U <= %d) = %v, want %v", m, n, u, got, want)
				}
			}
		}
	}
	// At the exact limits the normal approximations that take over are
	// close to the counts.
	for _, u := range []int{1000, 1100, 1250} {
		if d := math.Abs(rankSumCDF(u, 50, 50) - rankSumNormal(u, 50, 50)); d > 0.002 {
			t.Errorf("rank sum 50,50 at %d: the approximation is off by %v", u, d)
		}
	}
	for _, s := range []int{7000, 8000} {
		if d := math.Abs(signedRankCDF(s, 200) - signedRankNormal(s, 200)); d > 0.002 {
			t.Errorf("signed rank 200 at %d: the approximation is off by %v", s, d)
		}
	}
	for k, want := range map[int]float64{0: 1.0 / 64, 3: 42.0 / 64, 6: 1} {
		if got := binomialHalfCDF(k, 6); !near(got, want) {
			t.Errorf("P(Bin(6, 1/2) <= %d) = %v, want %v", k, got, want)
		}
	}
}

// TestShiftCILevels checks the signed-rank interval's ranks among the
// Walsh averages and its exact levels.
func TestShiftCILevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n     int
		k     int
		level float64
	}{
		{2, 1, 0.5},
		{3, 1, 0.75},
		{5, 1, 1 - 2.0/32},
		{6, 1, 1 - 2.0/64},
		{7, 3, 1 - 2*3.0/128},
		{10, 9, 1 - 2*bruteSignedRank(8, 10)},
	}
	for _, tt := range tests {
		ds := seq(tt.n)
		e := ShiftCI(ds)
		var w []float64
		for i := range ds {
			for j := i; j < len(ds); j++ {
				w = append(w, (ds[i]+ds[j])/2)
			}
		}
		wantLo, wantHi := kth(w, tt.k), kth(w, len(w)+1-tt.k)
		if e.Lo != wantLo || e.Hi != wantHi || !near(e.Level, tt.level) {
			t.Errorf("n=%d: [%v, %v] at %v, want [%v, %v] at %v", tt.n, e.Lo, e.Hi, e.Level, wantLo, wantHi, tt.level)
		}
		if want := (1 + float64(tt.n)) / 2; e.Median != want {
			t.Errorf("n=%d: Hodges-Lehmann %v, want %v", tt.n, e.Median, want)
		}
	}
	// n = 10: rank 10 would fall below 95%.
	if 1-2*bruteSignedRank(9, 10) >= Nominal {
		t.Error("rank 9 of 10 is not the largest that covers 95%")
	}
}

func kth(xs []float64, k int) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[k-1]
}

func TestShiftBetween(t *testing.T) {
	t.Parallel()
	a, b := []float64{1, 2, 3}, []float64{11, 12, 13}
	e := ShiftBetween(a, b)
	if e.Median != 10 || e.Lo != 8 || e.Hi != 12 || !near(e.Level, 0.9) || e.N != 3 {
		t.Errorf("3 against 3: %+v, want 10 [8, 12] at 90%%", e)
	}
	if p := HigherP(a, b); !near(p, 1.0/20) {
		t.Errorf("HigherP = %v, want 1/20", p)
	}
	if p := HigherP(b, a); p != 1 {
		t.Errorf("HigherP reversed = %v, want 1", p)
	}
	// 6 against 6: the largest k with 1 - 2 P(U < k) >= 95%.
	a6, b6 := seq(6), seq(6)
	for i := range b6 {
		b6[i] += 0.5
	}
	e = ShiftBetween(a6, b6)
	k := 1
	for 1-2*bruteRankSum(k, 6, 6) >= Nominal {
		k++
	}
	if want := 1 - 2*bruteRankSum(k-1, 6, 6); !near(e.Level, want) || e.Level < Nominal {
		t.Errorf("6 against 6: level %v, want %v (k %d)", e.Level, want, k)
	}
	if e := ShiftBetween([]float64{1}, []float64{3, 4}); e.Interval() || e.Median != 2.5 {
		t.Errorf("one against two: %+v, want 2.5 without an interval", e)
	}
	// Ties count against the alternative.
	if p := HigherP([]float64{1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("all tied: p = %v, want 1", p)
	}
}

func TestMeanAndBatchMeans(t *testing.T) {
	t.Parallel()
	// Three units: Student's t at MeanLevel(3), 96.5%, on two degrees of
	// freedom, 5.2039, labelled 95%.
	e := MeanCI([]float64{1, 2, 3})
	if half := 5.203877 * 1 / math.Sqrt(3); e.Median != 2 || math.Abs(e.Hi-2-half) > 1e-5 || e.Level != Nominal {
		t.Errorf("MeanCI: %+v, want 2 ± 5.2039/√3 at 95%%", e)
	}
	// 25 samples of minimum batch length 2: 10 batches of 2, the last five
	// samples in the mean only.
	xs := make([]float64, 25)
	for i := range xs {
		xs[i] = float64(i % 2 * 2) // batches of (0, 2): every batch mean is 1
	}
	e = BatchMeansCI(xs, 2)
	if e.N != 10 || e.Lo != e.Hi-0 && e.Hi-e.Lo > 1e-12 || !near(e.Median, 24.0/25) {
		t.Errorf("BatchMeansCI: %+v, want 10 batches of mean 1 with no spread, mean 24/25", e)
	}
	if e := BatchMeansCI(xs[:3], 2); e.Interval() {
		t.Errorf("1 batch: %+v, want no interval", e)
	}
	// Two batches: MeanCI's calibrated Student's t on one degree of
	// freedom, at MeanLevel(2), 96.5%: t(0.9825, 1) = 18.1708.
	if e := BatchMeansCI([]float64{1, 1, 3, 3}, 2); e.N != 2 || math.Abs(e.Hi-2-18.170807) > 1e-5 {
		t.Errorf("2 batches of means 1 and 3: %+v, want 2 ± t(0.9825, 1)", e)
	}
}

func TestPairedAndBetween(t *testing.T) {
	t.Parallel()
	// Six deployments of two rounds: other is base + 1 + a deployment
	// effect the pairing removes.
	var base, other Sample
	for d := 1; d <= 6; d++ {
		for r := range 2 {
			round := 2*(d-1) + r + 1
			v := float64(10 * d)
			base = append(base, Obs{Deployment: d, Round: round, V: v + float64(r)})
			other = append(other, Obs{Deployment: d, Round: round, V: v + float64(r) + 1 + 0.01*float64(d)})
		}
	}
	if u := base.Units(); len(u) != 6 || u[0] != 10.5 {
		t.Fatalf("units %v, want one median per deployment", u)
	}
	d := Paired(base, other)
	if d.Delta.N != 6 || d.Delta.Lo < 1 || d.Delta.Hi > 1.07 || !d.Measurable() || d.PHigher > 1.0/64+1e-12 {
		t.Errorf("paired: %+v", d.Delta)
	}
	// One deployment: the rounds are the units.
	one := Sample{{Deployment: 1, Round: 1, V: 1}, {Deployment: 1, Round: 2, V: 2}, {Deployment: 1, Round: 3, V: 3}}
	if u := one.Units(); len(u) != 3 {
		t.Errorf("one deployment: units %v, want the rounds", u)
	}
	b := Between(one.Units(), Sample{{Deployment: 1, Round: 1, V: 2}, {Deployment: 1, Round: 2, V: 4}, {Deployment: 1, Round: 3, V: 6}}.Units())
	if !near(b.Pct.Median, 100) || b.Delta.Median != 2 {
		t.Errorf("between: pct %+v delta %+v, want the ratio 2 as +100%%", b.Pct, b.Delta)
	}
}

// TestMeanCICoversSkewedUnits: on bench/validity's skewed, heavy-tailed
// units (lognormal, 8.6%, one in twenty 1.5 times as high), the price's
// interval covers the mean at least 94% of the time at three to twenty
// units, which Student's t at 95% does not (91% to 94%).
func TestMeanCICoversSkewedUnits(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	draw := func() float64 {
		v := 3.6 * math.Exp(0.05*r.NormFloat64()+0.07*r.NormFloat64())
		if r.Float64() < 0.05 {
			v *= 1.5
		}
		return v
	}
	var truth float64
	const truthDraws = 1_000_000
	for range truthDraws {
		truth += draw() / truthDraws
	}
	const trials = 20000
	for _, n := range []int{3, 5, 6, 7, 10, 20} {
		hit := 0
		xs := make([]float64, n)
		for range trials {
			for i := range xs {
				xs[i] = draw()
			}
			if e := MeanCI(xs); e.Lo <= truth && truth <= e.Hi {
				hit++
			}
		}
		if c := float64(hit) / trials; c < 0.94 {
			t.Errorf("%d units: MeanCI covered the mean %.2f%% of the time, want at least 94%%", n, 100*c)
		}
	}
}
