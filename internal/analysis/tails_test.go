package analysis

import (
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func loadTails(t *testing.T, st resultstest.TailStudy) *Dataset {
	t.Helper()
	dir := t.TempDir()
	if _, err := resultstest.WriteTails(dir, st); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTimeoutsCountInTheTail: of 100,000 requests a run, one mesh times
// out 90 (0.09%) at its 5 s timeout and another serves those 90 at 5 s;
// both serve 50 at 200 ms and the rest at 1 ms. The one that timed out
// must not show the better p99.9: its failed requests count at the
// timeout, so both p99.9s are 200 ms.
func TestTimeoutsCountInTheTail(t *testing.T) {
	t.Parallel()
	const timeout = 5 * time.Second
	d := loadTails(t, resultstest.TailStudy{Reps: 3, Timeout: timeout, Rate: 1000, Meshes: []resultstest.TailMesh{
		{Name: "baseline", Profile: "baseline", Served: map[time.Duration]int64{time.Millisecond: 99_950, 200 * time.Millisecond: 50}},
		{Name: "times-out", Profile: "sidecar", Served: map[time.Duration]int64{time.Millisecond: 99_860, 200 * time.Millisecond: 50}, Failed: 90},
		{Name: "serves-slowly", Profile: "sidecar", Served: map[time.Duration]int64{time.Millisecond: 99_860, 200 * time.Millisecond: 50, timeout: 90}},
	}})
	c := d.Configs[0]
	out, slow := d.Group("times-out", c).Estimate(P999), d.Group("serves-slowly", c).Estimate(P999)
	if !out.Valid() || !slow.Valid() {
		t.Fatalf("p99.9 not shown: %+v, %+v", out, slow)
	}
	if out.Median < slow.Median {
		t.Errorf("p99.9 of the mesh timing out 0.09%%: %.1f ms, better than %.0f ms of the mesh serving them slowly", out.Median, slow.Median)
	}
	if out.Median < 199 || out.Median > 201 {
		t.Errorf("p99.9 of the mesh timing out 0.09%%: %.1f ms, want 200 (the 90 at the timeout lie beyond it)", out.Median)
	}
	// Its overhead over the baseline says the same.
	if o, _ := d.Overhead("times-out", c, P999); o.Delta.Median < 190 {
		t.Errorf("added p99.9 of the mesh timing out 0.09%%: %.1f ms, want about 199", o.Delta.Median)
	}
}

// TestPairedBoundsACensoredSide: a baseline that fails 0.5% of its
// requests with no timeout recorded has them censored at its longest
// served latency, 1 ms, so its p99.9 is at least 1 ms, and a mesh's p99.9
// of 2 ms is at most 1 ms above it: that difference's lower end is only
// an upper bound, and it is not measurable, however tight it looks.
func TestPairedBoundsACensoredSide(t *testing.T) {
	t.Parallel()
	d := loadTails(t, resultstest.TailStudy{Reps: 6, Rate: 1000, Meshes: []resultstest.TailMesh{
		{Name: "baseline", Profile: "baseline", Served: map[time.Duration]int64{time.Millisecond: 99_500}, Failed: 500},
		{Name: "mesh", Profile: "sidecar", Served: map[time.Duration]int64{time.Millisecond: 99_000, 2 * time.Millisecond: 1000}},
	}})
	o, ok := d.Overhead("mesh", d.Configs[0], P999)
	if !ok || !o.Delta.Interval() {
		t.Fatalf("no added p99.9: %+v", o)
	}
	if o.Measurable() || Judge(o) == Higher {
		t.Errorf("a difference over a censored baseline called measurable: %+.2f ms [%+.2f, %+.2f]", o.Delta.Median, o.Delta.Lo, o.Delta.Hi)
	}
}

// TestTailGuardIsPerRepetition: a percentile's figure is the median of
// the repetitions' own percentiles, so each repetition must hold its
// minimum; three runs of 4,000 pool 12,000 but none holds a p99.9.
func TestTailGuardIsPerRepetition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		perRep    []int64
		p99, p999 bool
	}{
		{"3 runs of 4,000 pool 12,000", []int64{4000, 4000, 4000}, true, false},
		{"3 runs of 10,000", []int64{10_000, 10_000, 10_000}, true, true},
		{"one run of 9,999 among 20,000s", []int64{20_000, 9_999, 20_000}, true, false},
		{"3 runs of 400 pool 1,200", []int64{400, 400, 400}, false, false},
	}
	for _, tt := range tests {
		g := &Group{}
		for i, n := range tt.perRep {
			h := metrics.NewHistogram()
			h.RecordN(time.Duration(i+1)*time.Millisecond, n)
			g.add(&Rep{Values: map[Metric]float64{P50: float64(i + 1), P99: float64(i + 1), P999: float64(i + 1), QPS: 10}}, h)
		}
		if got := g.Supports(P999); got != tt.p999 || (len(g.Values(P999)) > 0) != tt.p999 {
			t.Errorf("%s: p99.9 shown %v, want %v", tt.name, got, tt.p999)
		}
		if got := g.Supports(P99); got != tt.p99 {
			t.Errorf("%s: p99 shown %v, want %v", tt.name, got, tt.p99)
		}
	}
}
