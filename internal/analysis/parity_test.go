package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// parityGroup is a group of six repetitions, each its own deployment and
// round, whose figures are the given ones times 0.97 to 1.03 (median 1),
// with the data plane spread over proxies.
func parityGroup(d *Dataset, name string, spec mesh.MeshSpec, cfg LoadConfig, v map[Metric]float64, proxies int) {
	g := d.group(name, cfg)
	h := metrics.NewHistogram()
	for range 2000 { // enough requests for p99
		h.Record(time.Millisecond)
	}
	for i, f := range []float64{0.97, 0.98, 0.99, 1.01, 1.02, 1.03} {
		vals := map[Metric]float64{}
		for m, x := range v {
			vals[m] = x * f
		}
		g.add(&Rep{MeshSpec: spec, Values: vals, Alloc: map[Part]Allocation{PartDataPlane: {Components: proxies}},
			Summary: results.Summary{Deployment: i + 1, Repetition: i + 1}}, h)
	}
	d.Meshes = append(d.Meshes, name)
}

func TestParities(t *testing.T) {
	t.Parallel()
	cfg := newConfig(map[string]string{"rate": "40"})
	d := &Dataset{Baseline: "baseline", Configs: []LoadConfig{cfg}, groups: map[string]*Group{}}
	istiod := func(s mesh.MeshSpec) mesh.MeshSpec { s.ControlPlane = mesh.ControlPlaneIstiod; return s }
	sidecar := mesh.MeshSpec{Profile: mesh.ProfileSidecar}
	l7 := mesh.MeshSpec{Profile: mesh.ProfileSidecarL7Policy}
	parityGroup(d, "baseline", mesh.MeshSpec{Profile: mesh.ProfileBaseline}, cfg, map[Metric]float64{P50: 1, P99: 2}, 0)
	parityGroup(d, "sidecar", sidecar, cfg, map[Metric]float64{P50: 2, P99: 4, CPUPerRequest: 100, Memory(PartDataPlane): 400}, 4)
	parityGroup(d, "l7", l7, cfg, map[Metric]float64{P50: 2.5, P99: 5, CPUPerRequest: 120, Memory(PartDataPlane): 400}, 4)
	parityGroup(d, "sidecar-istiod", istiod(sidecar), cfg, map[Metric]float64{P50: 3, P99: 4, CPUPerRequest: 150, Memory(PartDataPlane): 480}, 4)
	parityGroup(d, "l7-istiod", istiod(l7), cfg, map[Metric]float64{P50: 2.5, P99: 5, CPUPerRequest: 120, Memory(PartDataPlane): 200}, 2)
	// No twin: meshbench never ran this profile with 4 workers.
	parityGroup(d, "sidecar-4w-istiod", istiod(mesh.MeshSpec{Profile: mesh.ProfileSidecar, Workers: 4}), cfg, map[Metric]float64{P50: 3}, 4)

	ps := d.Parities(cfg)
	if len(ps) != 2 {
		t.Fatalf("%d pairs, want sidecar and l7's: %+v", len(ps), ps)
	}
	near := func(what string, e Estimate, want float64) {
		t.Helper()
		if math.Abs(e.Median-want) > 1e-9 || !e.Interval() || e.Lo > e.Median || e.Hi < e.Median {
			t.Errorf("%s: %+v, want %g inside an interval", what, e, want)
		}
	}
	sc := ps[0]
	if sc.Profile != mesh.ProfileSidecar || sc.Meshbench != "sidecar" || sc.Istiod != "sidecar-istiod" {
		t.Fatalf("first pair %s: %s against %s", sc.Profile, sc.Istiod, sc.Meshbench)
	}
	near("CPU per request", sc.CPUPerRequest, 1.5)
	near("memory per proxy", sc.MemoryPerProxy, 1.2)
	near("added p50", sc.AddedP50, 2) // (3-1)/(2-1)
	near("added p99", sc.AddedP99, 1) // (4-2)/(4-2)
	near("p50 difference", sc.P50.Delta, 1)
	if sc.CPUPerRequest.Lo <= 1 || sc.AddedP50.Lo <= 1 {
		t.Errorf("a 50%% difference with 2%% noise is not measurable: CPU %+v, added p50 %+v", sc.CPUPerRequest, sc.AddedP50)
	}
	l := ps[1]
	if l.Meshbench != "l7" || l.Istiod != "l7-istiod" {
		t.Fatalf("second pair: %s against %s", l.Istiod, l.Meshbench)
	}
	near("l7 CPU per request", l.CPUPerRequest, 1)
	near("l7 memory per proxy", l.MemoryPerProxy, 1) // 200 over 2 proxies against 400 over 4
	if l.CPUPerRequest.Lo > 1 || l.CPUPerRequest.Hi < 1 {
		t.Errorf("equal figures read as different: %+v", l.CPUPerRequest)
	}
}

// rounds is a sample of one deployment per round.
func rounds(vs ...float64) Sample {
	var s Sample
	for i, v := range vs {
		s = append(s, Obs{Deployment: i + 1, Round: i + 1, V: v})
	}
	return s
}

func TestAddedRatio(t *testing.T) {
	t.Parallel()
	if e := AddedRatio(rounds(1), rounds(2), rounds(4)); e.Median != 3 || e.Interval() {
		t.Errorf("one round: %+v, want 3 without an interval", e)
	}
	if e := AddedRatio(rounds(1, 1, 2), rounds(2, 3, 4), rounds(4, 5, 8)); e.Median != 3 || e.Lo != 2 || e.Hi != 3 || e.Level != 0.75 {
		t.Errorf("three rounds: %+v, want the median 3 in [2, 3] at 75%%", e)
	}
	if e := AddedRatio(rounds(1, 1, 1), rounds(1, 1, 1), rounds(2, 2, 2)); e.Valid() {
		t.Errorf("a reference that adds nothing: %+v, want no ratio", e)
	}
	if e := AddedRatio(nil, rounds(1), rounds(2)); e.Valid() {
		t.Errorf("no baseline: %+v", e)
	}
}

func TestDiffRatio(t *testing.T) {
	t.Parallel()
	if r := Paired(rounds(2, 2, 2, 2, 2, 2), rounds(3, 3, 3, 3, 3, 3)).Ratio(); r.Median != 1.5 || r.Lo != 1.5 || r.Hi != 1.5 || !r.Interval() || r.Level < Nominal {
		t.Errorf("3 over 2: %+v", r)
	}
}
