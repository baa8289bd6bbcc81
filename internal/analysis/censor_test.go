package analysis

import (
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestPairedBoundsNameTheBound: TestPairedBoundsACensoredSide's
// difference over a censored baseline is at most its value at every
// number, judged Censored; its p50, far from the failed requests, is
// exact.
func TestPairedBoundsNameTheBound(t *testing.T) {
	t.Parallel()
	d := loadTails(t, resultstest.TailStudy{Reps: 6, Rate: 1000, Meshes: []resultstest.TailMesh{
		{Name: "baseline", Profile: "baseline", Served: map[time.Duration]int64{time.Millisecond: 99_500}, Failed: 500},
		{Name: "mesh", Profile: "sidecar", Served: map[time.Duration]int64{time.Millisecond: 99_000, 2 * time.Millisecond: 1000}},
	}})
	o, _ := d.Overhead("mesh", d.Configs[0], P999)
	if o.Delta.LoBound != AtMost || o.Delta.MedianBound != AtMost || o.Delta.HiBound != AtMost || Judge(o) != Censored {
		t.Errorf("added p99.9 over a censored baseline: %+v, judged %v; want every number at most, judged Censored", o.Delta, Judge(o))
	}
	if o.Base.MedianBound != AtLeast || o.Other.Censored() {
		t.Errorf("the baseline's p99.9 %+v, want at least; the mesh's %+v, want exact", o.Base, o.Other)
	}
	if p50, _ := d.Overhead("mesh", d.Configs[0], P50); p50.Delta.Censored() {
		t.Errorf("added p50 censored: %+v", p50.Delta)
	}
}

// TestTimeoutsCensorThePercentileInTheGroup: a mesh failing 0.5% of its
// requests has a p99.9 at the timeout, marked at least; its p99 is not.
func TestTimeoutsCensorThePercentileInTheGroup(t *testing.T) {
	t.Parallel()
	d := loadTails(t, resultstest.TailStudy{Reps: 6, Timeout: 5 * time.Second, Rate: 1000, Meshes: []resultstest.TailMesh{
		{Name: "baseline", Profile: "baseline", Served: map[time.Duration]int64{time.Millisecond: 20_000}},
		{Name: "mesh", Profile: "sidecar", Served: map[time.Duration]int64{2 * time.Millisecond: 19_900}, Failed: 100},
	}})
	g := d.Group("mesh", d.Configs[0])
	p999, p99 := g.Estimate(P999), g.Estimate(P99)
	if p999.Median < 4990 || p999.MedianBound != AtLeast || p999.LoBound != AtLeast || p999.HiBound != AtLeast {
		t.Errorf("p99.9 of a mesh failing 0.5%%: %+v, want ≥ 5000 ms at every number", p999)
	}
	if p99.Censored() || p99.Median > 2.1 {
		t.Errorf("p99 of a mesh failing 0.5%%: %+v, want an exact 2 ms", p99)
	}
	// The mean and max are the served requests'.
	if mx := g.Estimate(MaxLatency); mx.Median > 2.1 {
		t.Errorf("max latency %+v takes in the failed requests", mx)
	}
	o, _ := d.Overhead("mesh", d.Configs[0], P999)
	if o.Delta.LoBound != AtLeast || !o.Measurable() {
		t.Errorf("added p99.9 of a censored mesh over an exact baseline: %+v, want at least, and measurable", o.Delta)
	}
}

// TestGateReadsCensoredBounds: between two runs, B's figure censored at
// the timeout and worse is still a regression (at least that worse); a
// censored B never passes as an improvement; and an A censored above B
// does not make B an improvement either when the bound is on the wrong
// side.
func TestGateReadsCensoredBounds(t *testing.T) {
	t.Parallel()
	a := []float64{10, 11, 12, 10.5, 11.5, 12.5}
	b := []float64{5000, 5000, 5000, 5000, 5000, 5000}
	at := []Bound{AtLeast, AtLeast, AtLeast, AtLeast, AtLeast, AtLeast}
	worse := Change{Metric: P999, Diff: BetweenBounded(a, nil, b, at)}
	if !worse.Regressed() || worse.Improved() || worse.Diff.Delta.LoBound != AtLeast {
		t.Errorf("a censored B worse than A: regressed %v, improved %v, %+v; want a regression at least that large", worse.Regressed(), worse.Improved(), worse.Diff.Delta)
	}
	better := Change{Metric: P999, Diff: BetweenBounded(b, at, a, nil)}
	if better.Regressed() || better.Diff.Delta.HiBound != AtMost || !better.Improved() {
		t.Errorf("B exact below a censored A: %+v; want an improvement, at most that large", better.Diff.Delta)
	}
	// Both censored: the difference bounds nothing.
	both := Change{Metric: P999, Diff: BetweenBounded(b, at, b, at)}
	if both.Regressed() || both.Improved() || both.Diff.Delta.MedianBound != Unbounded {
		t.Errorf("both censored: %+v, regressed %v, improved %v", both.Diff.Delta, both.Regressed(), both.Improved())
	}
	// A censored B below A (A's timeout longer): never an improvement.
	high := []float64{9000, 9000, 9000, 9000, 9000, 9000}
	lowB := Change{Metric: P999, Diff: BetweenBounded(high, nil, b, at)}
	if lowB.Improved() || Judge(lowB.Diff) != Censored {
		t.Errorf("a censored B below A: judged %v, improved %v; want Censored, no improvement", Judge(lowB.Diff), lowB.Improved())
	}
}
