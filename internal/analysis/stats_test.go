package analysis

import (
	"math"
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

func TestMedianCI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		xs             []float64
		median, lo, hi float64
		interval       bool
	}{
		// One value has no spread to bootstrap.
		{"single", []float64{5}, 5, 5, 5, false},
		// With three values each extreme is the resampled median with
		// probability 7/27 > 2.5%, so the interval is the range.
		{"three", []float64{10, 12, 11}, 11, 10, 12, true},
		{"constant", []float64{4, 4, 4, 4}, 4, 4, 4, true},
	}
	for _, tt := range tests {
		e := MedianCI(tt.xs)
		if e.Median != tt.median || e.Lo != tt.lo || e.Hi != tt.hi || e.Interval() != tt.interval || e.N != len(tt.xs) {
			t.Errorf("%s: MedianCI(%v) = %+v, want median %v [%v, %v]", tt.name, tt.xs, e, tt.median, tt.lo, tt.hi)
		}
	}
}

func TestMedianCIIsReproducibleAndNarrowsWithData(t *testing.T) {
	t.Parallel()
	small := []float64{9, 10, 11, 10.5, 9.5}
	var large []float64
	for i := range 41 {
		large = append(large, 9+float64(i%5)*0.5)
	}
	a, b := MedianCI(small), MedianCI(small)
	if a != b {
		t.Fatalf("same input, different intervals: %+v vs %+v", a, b)
	}
	if a.Lo > a.Median || a.Hi < a.Median {
		t.Fatalf("interval %+v does not hold its median", a)
	}
	l := MedianCI(large)
	if l.Hi-l.Lo >= a.Hi-a.Lo {
		t.Errorf("41 values give interval width %v, no narrower than 5 values' %v", l.Hi-l.Lo, a.Hi-a.Lo)
	}
}

func TestDifference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		base, oth  []float64
		delta, pct float64
		measurable bool
	}{
		{"clear increase", []float64{1.0, 1.1, 0.9, 1.0, 1.05}, []float64{2.0, 2.1, 1.9, 2.05, 2.0}, 1.0, 100, true},
		{"clear decrease", []float64{2, 2.1, 1.9}, []float64{1, 1.1, 0.9}, -1, -50, true},
		// Overlapping runs: the interval of the difference spans zero.
		{"overlap", []float64{1.0, 1.2, 0.9, 1.1, 1.0}, []float64{1.05, 0.95, 1.15, 1.0, 1.1}, 0.05, 5, false},
		{"one run each", []float64{1}, []float64{3}, 2, 200, false},
		// Two runs a side cannot show a difference, however far apart.
		{"two runs each", []float64{1, 1}, []float64{3, 3}, 2, 200, false},
	}
	for _, tt := range tests {
		d := Difference(tt.base, tt.oth)
		if math.Abs(d.Delta.Median-tt.delta) > 1e-9 || math.Abs(d.Pct.Median-tt.pct) > 1e-6 {
			t.Errorf("%s: delta %v (%v%%), want %v (%v%%)", tt.name, d.Delta.Median, d.Pct.Median, tt.delta, tt.pct)
		}
		if d.Measurable() != tt.measurable {
			t.Errorf("%s: Measurable() = %v, want %v (interval %v to %v)", tt.name, d.Measurable(), tt.measurable, d.Delta.Lo, d.Delta.Hi)
		}
		if d.Delta.Interval() && (d.Delta.Lo > d.Delta.Median || d.Delta.Hi < d.Delta.Median) {
			t.Errorf("%s: interval [%v, %v] misses the difference %v", tt.name, d.Delta.Lo, d.Delta.Hi, d.Delta.Median)
		}
	}
}
