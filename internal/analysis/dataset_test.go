package analysis

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func loadFixture(t *testing.T) *Dataset {
	t.Helper()
	d, err := Load(fixtureDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func cfg(conns, replicas int) LoadConfig {
	return newConfig(map[string]string{"connections": strconv.Itoa(conns), "replicas.productpage": strconv.Itoa(replicas)})
}

func TestLoadGroupsTheFixture(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	if want := []string{resultstest.Baseline, resultstest.Ambient, resultstest.Sidecar}; !slices.Equal(d.Meshes, want) {
		t.Errorf("meshes %v, want %v", d.Meshes, want)
	}
	if d.Baseline != resultstest.Baseline {
		t.Errorf("baseline %q", d.Baseline)
	}
	var labels []string
	for _, c := range d.Configs {
		labels = append(labels, c.Key)
	}
	want := []string{
		"connections=32,replicas.productpage=1", "connections=32,replicas.productpage=4",
		"connections=64,replicas.productpage=1", "connections=64,replicas.productpage=4",
		"connections=128,replicas.productpage=1", "connections=128,replicas.productpage=4",
	}
	if !slices.Equal(labels, want) {
		t.Errorf("configs in order %v, want %v", labels, want)
	}
	if p, ok := d.LoadSweep(); !ok || p.Name != "connections" || !slices.Equal(p.Values, []string{"32", "64", "128"}) {
		t.Errorf("load sweep %+v %v", p, ok)
	}
	if p, ok := d.ReplicaSweep(); !ok || p.Name != "replicas.productpage" {
		t.Errorf("replica sweep %+v %v", p, ok)
	}
	if r := d.Representative(); r.Key != want[len(want)-1] {
		t.Errorf("representative %q", r.Key)
	}
}

func TestLoadExcludesDistortedAndFailedCells(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	if len(d.Excluded) != 2 {
		t.Fatalf("excluded %d cells, want 2: %+v", len(d.Excluded), d.Excluded)
	}
	kinds := map[string]Exclusion{}
	for _, e := range d.Excluded {
		kinds[e.Kind] = e
	}
	dist, fail := kinds[results.StatusDistorted], kinds[results.StatusFailed]
	if dist.Summary.Mesh != resultstest.DistortedMesh || dist.Summary.Repetition != resultstest.DistortedRep {
		t.Errorf("distorted exclusion %+v", dist)
	}
	if fail.Summary.Mesh != resultstest.FailedMesh || fail.Reason == "" {
		t.Errorf("failed exclusion %+v", fail)
	}
	g := d.Group(resultstest.DistortedMesh, cfg(resultstest.DistortedConnections, resultstest.DistortedReplicas))
	if len(g.Reps) != 2 || len(g.Excluded) != 1 {
		t.Errorf("distorted group has %d usable and %d excluded repetitions, want 2 and 1", len(g.Reps), len(g.Excluded))
	}
	for _, r := range g.Reps {
		if r.Summary.Repetition == resultstest.DistortedRep {
			t.Error("the distorted repetition is among the usable ones")
		}
	}
	g = d.Group(resultstest.FailedMesh, cfg(resultstest.FailedConnections, resultstest.FailedReplicas))
	if len(g.Reps) != 5 || g.Estimate(P50).N != 5 || g.Estimate(P50).Level != 1-2.0/32 {
		t.Errorf("failed group: %d usable repetitions, estimate %+v", len(g.Reps), g.Estimate(P50))
	}
}

func TestGroupFiguresMatchTheCells(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	g := d.Group(resultstest.Sidecar, cfg(64, 4))
	var p99s, qps []float64
	var served, failed int64
	for _, r := range g.Reps {
		// Each run's p99 is read off its served requests with its failed
		// ones at the cell's timeout (censored).
		c, err := results.ReadCell(fixtureDir, r.Summary)
		if err != nil {
			t.Fatal(err)
		}
		h := metrics.NewHistogram()
		h.Merge(c.Merged.Latency)
		n := load.Failed(c.Merged.Errors, c.Merged.StatusCodes)
		h.RecordN(c.Load.Options.Timeout, n)
		p99s = append(p99s, float64(h.Percentile(99))/float64(time.Millisecond))
		qps = append(qps, r.Summary.AchievedRate)
		served, failed = served+c.Merged.Latency.Count(), failed+n
	}
	if failed == 0 || served+failed != 6*30000 {
		t.Fatalf("the fixture's cells served %d and failed %d requests, want 180,000 in all, some failed", served, failed)
	}
	if got, want := g.Estimate(P99).Median, Median(p99s); math.Abs(got-want) > 1e-9 {
		t.Errorf("p99 median %v, want %v from the cells' histograms", got, want)
	}
	if got, want := g.Estimate(QPS).Median, Median(qps); math.Abs(got-want) > 1e-9 {
		t.Errorf("QPS median %v, want %v", got, want)
	}
	// Six deployments: [min, max] at 96.9%.
	if e := g.Estimate(P50); !(e.Lo <= e.Median && e.Median <= e.Hi) || e.N != 6 || e.Level != 1-2.0/64 || e.Lo != slices.Min(g.Sample(P50).Values()) {
		t.Errorf("p50 estimate %+v", e)
	}
	// The pooled histogram is the served requests'.
	if n := g.Latency().Count(); n != served {
		t.Errorf("pooled histogram holds %d requests, want the %d served", n, served)
	}
}

func TestParts(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	c := cfg(32, 1)
	sc, amb, base := d.Group(resultstest.Sidecar, c), d.Group(resultstest.Ambient, c), d.Group(resultstest.Baseline, c)
	r := sc.Reps[0]
	// The load job's sidecar runs on the load node: in the data plane, but
	// not on the app nodes.
	if !(r.Values[CPU(PartDataPlaneAppNodes)] < r.Values[CPU(PartDataPlane)]) {
		t.Errorf("sidecar data plane on app nodes %v is not below the whole data plane %v",
			r.Values[CPU(PartDataPlaneAppNodes)], r.Values[CPU(PartDataPlane)])
	}
	if a := r.Alloc["sidecar"]; a.Components != 7 || math.Abs(a.CPURequest-0.7) > 1e-9 || a.MemRequest != 7*128<<20 {
		t.Errorf("sidecar allocation %+v, want 7 sidecars of 100m / 128Mi", a)
	}
	if len(base.Values(CPU(PartDataPlane))) != 0 || d.HasPart(resultstest.Baseline, PartDataPlane) {
		t.Error("baseline has a data plane")
	}
	if !d.HasPart(resultstest.Ambient, "node-proxy") || amb.Estimate(Memory("node-proxy")).Median <= 0 {
		t.Error("ambient has no ztunnel figures")
	}
	u := r.Usage["app"]
	if len(u) < 10 || u[0].T != 0 || u[len(u)-1].T <= u[0].T {
		t.Errorf("app usage over time: %d points %+v", len(u), u[:min(len(u), 2)])
	}
	var mean float64
	for _, p := range u {
		mean += p.CPU
	}
	mean /= float64(len(u))
	if math.Abs(mean-r.Values[CPU("app")]) > 1e-9 {
		t.Errorf("app usage over time averages %v cores, the app CPU figure is %v", mean, r.Values[CPU("app")])
	}
}

func TestOverhead(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	c := cfg(32, 4)
	o, ok := d.Overhead(resultstest.Sidecar, c, P50)
	if !ok || !o.Measurable() || o.Delta.Median <= 0 || o.Pct.Median < 15 {
		t.Errorf("sidecar p50 overhead %+v, want a measurable increase of over 15%%", o)
	}
	if _, ok := d.Overhead(resultstest.Baseline, c, P50); ok {
		t.Error("the baseline has an overhead against itself")
	}
	want := Paired(d.Group(resultstest.Baseline, c).Sample(P95), d.Group(resultstest.Ambient, c).Sample(P95))
	if got, _ := d.Overhead(resultstest.Ambient, c, P95); got != want {
		t.Errorf("ambient p95 overhead %+v, want %+v", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	if _, err := Load(t.TempDir(), Options{}); err == nil {
		t.Error("an empty directory loaded")
	}
}

func TestBaselineByProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// A study may name its baseline anything; its profile says what it is.
	for i := range ix.Cells {
		if ix.Cells[i].Mesh == resultstest.Baseline {
			ix.Cells[i].Mesh = "no-mesh"
		}
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, option, want string
	}{
		{"by profile", "", "no-mesh"},
		{"given", resultstest.Ambient, resultstest.Ambient},
		{"given but absent", "nothing", ""},
	}
	for _, tt := range tests {
		d, err := Load(dir, Options{Baseline: tt.option})
		if err != nil {
			t.Fatal(err)
		}
		if d.Baseline != tt.want || (tt.want != "" && d.Meshes[0] != tt.want) {
			t.Errorf("%s: baseline %q, meshes %v; want %q first", tt.name, d.Baseline, d.Meshes, tt.want)
		}
	}
}
