package metrics

import (
	"encoding/json"
	"testing"
	"time"
)

func TestHistogramQuantilesAndRange(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	if got := h.Count(); got != 1000 {
		t.Fatalf("Count = %d, want 1000", got)
	}
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"p50", h.Percentile(50), 500 * time.Millisecond},
		{"p99", h.Percentile(99), 990 * time.Millisecond},
		{"min", h.Min(), time.Millisecond},
		{"max", h.Max(), time.Second},
	}
	for _, tt := range tests {
		// Three significant digits: within 0.1% of the true value.
		if d := tt.got - tt.want; d < -tt.want/1000 || d > tt.want/1000 {
			t.Errorf("%s = %v, want %v ± 0.1%%", tt.name, tt.got, tt.want)
		}
	}
}

func TestHistogramClampsOutOfRange(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	h.Record(100 * time.Nanosecond) // below 1 µs
	h.Record(2 * time.Hour)         // above the range
	if h.Count() != 2 {
		t.Fatalf("Count = %d, want 2: out-of-range samples must not be lost", h.Count())
	}
	if h.Min() != time.Microsecond {
		t.Errorf("Min = %v, want 1µs", h.Min())
	}
	if h.Max() < 59*time.Minute {
		t.Errorf("Max = %v, want about one hour", h.Max())
	}
}

func TestHistogramMergeIsExact(t *testing.T) {
	t.Parallel()
	a, b, all := NewHistogram(), NewHistogram(), NewHistogram()
	for i := 0; i < 5000; i++ {
		d := time.Duration(i*i%977+1) * time.Microsecond * 37
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	a.Merge(b)
	if !a.Equal(all) {
		t.Fatal("merging two halves differs from recording everything in one histogram")
	}
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	for i := 1; i < 300; i++ {
		h.RecordN(time.Duration(i)*time.Millisecond, int64(i))
	}
	b, err := json.Marshal(struct{ H *Histogram }{h})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ H *Histogram }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.H.Equal(h) {
		t.Fatalf("round trip changed the histogram: count %d vs %d", back.H.Count(), h.Count())
	}
	if err := json.Unmarshal([]byte(`{"H":"not-a-histogram"}`), &back); err == nil {
		t.Fatal("decoding garbage succeeded")
	}
}

func TestSpectrumIsMonotonicAndEndsAtMax(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	pts := h.Spectrum()
	if len(pts) < 10 {
		t.Fatalf("spectrum has %d points, want at least 10 for 100000 samples", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Percentile <= pts[i-1].Percentile || pts[i].Value < pts[i-1].Value {
			t.Fatalf("spectrum not monotonic at %d: %+v then %+v", i, pts[i-1], pts[i])
		}
	}
	if last := pts[len(pts)-1]; last.Percentile != 100 || last.Value != h.Max() {
		t.Fatalf("last point = %+v, want 100th percentile at max %v", last, h.Max())
	}
}
