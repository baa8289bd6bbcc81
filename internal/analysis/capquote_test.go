package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// capacityRun is a run's index with one deployment per map of calibrated
// capacities.
func capacityRun(deps ...map[string]float64) *Dataset {
	ix := &results.Index{}
	for i, caps := range deps {
		ix.Provenance.Deployments = append(ix.Provenance.Deployments, results.Deployment{Index: i + 1, Scaling: &results.Scaling{Capacities: caps}})
	}
	return &Dataset{Index: ix}
}

func searched(mesh string, rps, lo, hi float64) *CapacityMesh {
	c := &CapacityMesh{}
	c.Mesh, c.Status, c.Kind, c.RPS, c.CILow, c.CIHigh, c.Level = mesh, results.StatusOK, search.FormInterval, rps, lo, hi, search.Level
	c.Trials = make([]results.CapacityTrial, 10)
	return c
}

// TestCapacitySpreads: a mesh calibrated in every deployment scatters by
// its own calibrations; one calibrated once borrows those of the meshes
// calibrated twice or more (the reference, as the runner calibrates);
// a ratio's scatter is paired by deployment where two or more calibrated
// both, else the two add.
func TestCapacitySpreads(t *testing.T) {
	t.Parallel()
	deps := []map[string]float64{{"a": 100, "b": 1000}, {"a": 110}, {"a": 90}}
	lnSD := func(xs ...float64) float64 {
		var m, ss float64
		for _, x := range xs {
			m += math.Log(x) / float64(len(xs))
		}
		for _, x := range xs {
			ss += (math.Log(x) - m) * (math.Log(x) - m)
		}
		return math.Sqrt(ss / float64(len(xs)-1))
	}
	own := capacitySpread(deps, "a")
	if !near(own.SD, lnSD(100, 110, 90)) || own.DF != 2 || own.N != 3 || !slices.Equal(own.From, []string{"a"}) {
		t.Errorf("a's own spread %+v, want SD %v on 2 df", own, lnSD(100, 110, 90))
	}
	if borrowed := capacitySpread(deps, "b"); borrowed.SD != own.SD || borrowed.DF != 2 || !slices.Equal(borrowed.From, []string{"a"}) {
		t.Errorf("b's spread %+v, want a's %+v", borrowed, own)
	}
	if r := ratioSpread(deps, "b", "a"); r.Paired || !near(r.SD, math.Sqrt2*own.SD) || r.DF != 2 {
		t.Errorf("b/a's spread %+v, want a's twice over, added", r)
	}
	paired := []map[string]float64{{"a": 100, "b": 1000}, {"a": 110, "b": 1100}, {"a": 90, "b": 900}}
	if r := ratioSpread(paired, "b", "a"); !r.Paired || r.SD > 1e-12 || r.DF != 2 {
		t.Errorf("b/a's spread %+v, want none: every deployment moved both alike", r)
	}
	if s := capacitySpread(deps[:1], "a"); !s.Within() {
		t.Errorf("one deployment's spread %+v, want none", s)
	}
}

// TestHalfWidth: with no deployments' scatter the half-width is the
// search's normal one; with no search error, Student's t on the
// deployments' degrees of freedom times their scatter; in between, the
// two in squares, at a quantile between those two.
func TestHalfWidth(t *testing.T) {
	t.Parallel()
	z, t2 := zOf(Nominal), StudentQuantile(Nominal, 2)
	if got := halfWidth(0.1, Spread{}); !near(got, z*0.1) {
		t.Errorf("no scatter: %v, want %v", got, z*0.1)
	}
	sp := Spread{SD: 0.1, DF: 2, N: 3}
	if got := halfWidth(0, sp); !near(got, t2*0.1) {
		t.Errorf("no search error: %v, want %v", got, t2*0.1)
	}
	if got, w := halfWidth(0.1, sp), math.Hypot(0.1, 0.1); got <= z*w || got >= t2*w {
		t.Errorf("both: %v, want between %v and %v", got, z*w, t2*w)
	}
}

// TestCapacityQuote: over several deployments the search's interval
// widens, each side by its own error, and contains the search's; a bound
// is lowered by t times the scatter; one deployment quotes the search's
// own and says it is within one search.
func TestCapacityQuote(t *testing.T) {
	t.Parallel()
	d := capacityRun(map[string]float64{"a": 100}, map[string]float64{"a": 110}, map[string]float64{"a": 90})
	c := searched("a", 1000, 990, 1100)
	e, sp := d.CapacityQuote(c)
	below, above := math.Log(1000.0/990)/zOf(Nominal), math.Log(1100.0/1000)/zOf(Nominal)
	if sp.Within() || e.Median != 1000 || e.Level != Nominal || !near(e.Lo, 1000*math.Exp(-halfWidth(below, sp))) || !near(e.Hi, 1000*math.Exp(halfWidth(above, sp))) || e.Lo >= 990 || e.Hi <= 1100 {
		t.Errorf("quote %+v (%+v), want the search's [990, 1100] widened side by side", e, sp)
	}
	c.Kind, c.LowerBound, c.CILow, c.CIHigh = search.FormBound, true, 0, 0
	if e, _ := d.CapacityQuote(c); e.MedianBound != AtLeast || !near(e.Median, 1000*math.Exp(-StudentQuantile(Nominal, 2)*sp.SD)) || e.Interval() {
		t.Errorf("a bound's quote %+v, want 1000 lowered by t·SD", e)
	}
	one := capacityRun(map[string]float64{"a": 100})
	c = searched("a", 1000, 990, 1100)
	if e, sp := one.CapacityQuote(c); e.Lo != 990 || e.Hi != 1100 || !sp.Within() || !strings.Contains(sp.Why, "one deployment") {
		t.Errorf("one deployment's quote %+v (%+v), want the search's own, within one search", e, sp)
	}
	c.Over = results.OverConnections
	if _, sp := d.CapacityQuote(c); !sp.Within() {
		t.Errorf("a connection ceiling's spread %+v, want none", sp)
	}
}

// TestCapacityRatioBounds: an estimate over an estimate has an interval;
// a bound over an estimate is a lower bound, an estimate over a bound an
// upper one, two bounds nothing.
func TestCapacityRatioBounds(t *testing.T) {
	t.Parallel()
	d := capacityRun(map[string]float64{"a": 100, "b": 50})
	a, b := searched("a", 1000, 900, 1100), searched("b", 500, 450, 550)
	if r, _, ok := d.CapacityRatio(b, a); !ok || !r.Interval() || r.Median != 0.5 || r.Lo >= 0.45 || r.Hi <= 0.55 {
		t.Errorf("b/a %+v, want 0.5 with an interval wider than either search's share", r)
	}
	b.Kind, b.LowerBound = search.FormBound, true
	if r, _, ok := d.CapacityRatio(b, a); !ok || r.MedianBound != AtLeast || !near(r.Median, 500.0/1100) {
		t.Errorf("bound/estimate %+v, want at least 500/1100", r)
	}
	if r, _, ok := d.CapacityRatio(a, b); !ok || r.MedianBound != AtMost || !near(r.Median, 1100.0/500) {
		t.Errorf("estimate/bound %+v, want at most 1100/500", r)
	}
	a.Kind, a.LowerBound = search.FormBound, true
	if _, _, ok := d.CapacityRatio(a, b); ok {
		t.Error("two bounds gave a ratio")
	}
}
