package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// tenantDataset is a tenant-scaled run of two meshes at 1 and 2 loaded
// tenants out of 50: each rep's values are given per mesh and count.
func tenantDataset(values map[string]map[int]map[Metric]float64, alloc map[string]map[int]Allocation, published []results.Published) *Dataset {
	d := &Dataset{
		Index: &results.Index{Provenance: results.Provenance{
			Scaling:   &results.Scaling{Mode: "tenants", Tenants: []int{1, 2}, StudyTenants: 50, TenantRate: 17.5, Deployed: "loaded"},
			Published: published,
		}},
		Baseline: "baseline", Meshes: []string{"baseline", "sidecar"}, groups: map[string]*Group{},
	}
	for _, k := range []int{1, 2} {
		c := newConfig(map[string]string{results.TenantsParam: map[int]string{1: "1", 2: "2"}[k]})
		d.Configs = append(d.Configs, c)
		for _, m := range d.Meshes {
			r := &Rep{Values: values[m][k], Alloc: map[Part]Allocation{Part(metrics.RoleSidecar): alloc[m][k]}}
			// Enough requests that the pooled sample holds a p50.
			h := metrics.NewHistogram()
			h.RecordN(time.Millisecond, 100)
			d.group(m, c).add(r, h)
		}
	}
	return d
}

func TestFidelitiesAndReproductions(t *testing.T) {
	t.Parallel()
	v := map[string]map[int]map[Metric]float64{
		"baseline": {1: {P50: 1.0, QPS: 100}, 2: {P50: 1.5, QPS: 200}},
		"sidecar":  {1: {P50: 4.0, QPS: 90}, 2: {P50: 6.5, QPS: 170}},
	}
	src := "table 1"
	d := tenantDataset(v, nil, []results.Published{
		{Metric: "p50", Mesh: "baseline", Value: 1.57, Source: src},
		{Metric: "p50", Mesh: "sidecar", Value: 6.38, Source: src},
		{Metric: "added:p50", Mesh: "sidecar", Value: 4.81, Source: src},
		{Metric: "ratio:qps", Mesh: "sidecar", Value: 0.866, Source: src},
		{Metric: "reduction:p50", Mesh: "baseline", Against: "sidecar", Value: 75, Source: src},
		{Metric: "p50", Mesh: "sidecar", Params: map[string]string{results.TenantsParam: "1"}, Value: 4, Source: src},
		{Metric: "p50", Mesh: "linkerd", Value: 4.48, Source: src},
	})
	fs := d.Fidelities()
	// Without parameters the figure comes from the smallest tenant count.
	v["sidecar"][2][P50] = 6.5
	want := []struct {
		measured float64
		ok       bool
		tenants  string
	}{{1.0, true, "1"}, {4.0, true, "1"}, {3.0, true, "1"}, {0.9, true, "1"}, {75, true, "1"}, {4.0, true, "1"}, {0, false, "1"}}
	if len(fs) != len(want) {
		t.Fatalf("%d fidelities, want %d", len(fs), len(want))
	}
	for i, w := range want {
		f := fs[i]
		if f.OK != w.ok || math.Abs(f.Measured-w.measured) > 1e-9 || f.Config.Params[results.TenantsParam] != w.tenants {
			t.Errorf("%s %s: measured %g ok %v at %v, want %g %v at tenants=%s", f.Published.Metric, f.Published.Mesh, f.Measured, f.OK, f.Config.Params, w.measured, w.ok, w.tenants)
		}
	}
	if r := fs[2].Ratio(); math.Abs(r-3.0/4.81) > 1e-9 {
		t.Errorf("ratio %g", r)
	}
	reps := d.Reproductions(fs)
	// p50 without parameters: baseline and sidecar (linkerd unmeasured);
	// the figure with tenants=1 given is alone in its group.
	if len(reps) != 1 || !reps[0].Reproduces() || reps[0].Measured[0] != "baseline" {
		t.Errorf("reproductions %+v", reps)
	}
}

// repsDataset is one configuration of three meshes, each with the given
// p50 per repetition.
func repsDataset(p50s map[string][]float64) *Dataset {
	d := &Dataset{Baseline: "baseline", Meshes: []string{"baseline", "ambient", "sidecar"}, groups: map[string]*Group{}}
	c := newConfig(nil)
	d.Configs = []LoadConfig{c}
	for _, m := range d.Meshes {
		for _, v := range p50s[m] {
			h := metrics.NewHistogram()
			h.RecordN(time.Millisecond, 100)
			d.group(m, c).add(&Rep{Values: map[Metric]float64{P50: v}}, h)
		}
	}
	return d
}

func TestReproductionOrderAndSpread(t *testing.T) {
	t.Parallel()
	pub := []results.Published{
		{Metric: "added:p50", Mesh: "sidecar", Value: 4.81},
		{Metric: "added:p50", Mesh: "ambient", Value: 0.79},
	}
	base := []float64{1, 1.1, 0.9, 1, 1}
	for _, tc := range []struct {
		name             string
		ambient, sidecar []float64
		swapped, reprod  bool
	}{
		// Sidecar clearly above ambient: the study's order.
		{"kept", []float64{2, 2.1, 1.9, 2, 2}, []float64{5, 5.1, 4.9, 5, 5}, false, true},
		// Ambient clearly above the sidecar: every repetition says so.
		{"swapped and told apart", []float64{4, 4.1, 3.9, 4, 4}, []float64{3, 3.1, 2.9, 3, 3}, true, false},
		// Ambient's median above the sidecar's, but their repetitions
		// overlap: the run cannot tell them apart.
		{"swapped within the noise", []float64{3.2, 2.0, 4.4, 3.1, 2.6}, []float64{3.0, 4.2, 2.2, 2.9, 3.6}, true, true},
		// Too few repetitions for an interval: no excuse for the swap.
		{"swapped without an interval", []float64{4, 4}, []float64{3, 3}, true, false},
	} {
		d := repsDataset(map[string][]float64{"baseline": base, "ambient": tc.ambient, "sidecar": tc.sidecar})
		d.Index = &results.Index{Provenance: results.Provenance{Published: pub}}
		r := d.Reproductions(d.Fidelities())
		if len(r) != 1 {
			t.Fatalf("%s: %d reproductions, want 1", tc.name, len(r))
		}
		if got := len(r[0].Swaps) > 0; got != tc.swapped || r[0].Reproduces() != tc.reprod {
			t.Errorf("%s: swaps %+v, reproduces %v; want swapped %v, reproduces %v", tc.name, r[0].Swaps, r[0].Reproduces(), tc.swapped, tc.reprod)
		}
		if tc.swapped && (r[0].Swaps[0].Low != "ambient" || r[0].Swaps[0].High != "sidecar") {
			t.Errorf("%s: swap %+v, want ambient (low) and sidecar (high)", tc.name, r[0].Swaps[0])
		}
		if tc.name == "swapped and told apart" {
			if math.Abs(r[0].PublishedSpread-4.81/0.79) > 1e-9 || math.Abs(r[0].MeasuredSpread-2.0/3.0) > 1e-9 {
				t.Errorf("spreads %g and %g, want 6.09 and 0.67", r[0].PublishedSpread, r[0].MeasuredSpread)
			}
		}
	}
}

func TestExtrapolations(t *testing.T) {
	t.Parallel()
	sc := Part(metrics.RoleSidecar)
	v := map[string]map[int]map[Metric]float64{
		// The baseline has no sidecars; the sidecar mesh's sidecars use
		// 0.1 core per tenant exactly, while their memory has a fixed part.
		"baseline": {1: {P50: 1}, 2: {P50: 1}},
		"sidecar":  {1: {CPU(sc): 0.1, Memory(sc): 100 << 20}, 2: {CPU(sc): 0.2, Memory(sc): 150 << 20}},
	}
	alloc := map[string]map[int]Allocation{"sidecar": {1: {Components: 5, CPURequest: 0.5, MemRequest: 128 << 20}, 2: {Components: 10, CPURequest: 1.0, MemRequest: 128 << 20}}}
	es := tenantDataset(v, alloc, nil).Extrapolations()
	got := map[string]Extrapolation{}
	for _, e := range es {
		if e.Mesh != "sidecar" {
			t.Errorf("extrapolated %s %s: the baseline measured no sidecar", e.Mesh, e.Figure)
		}
		got[e.Figure] = e
	}
	for _, w := range []struct {
		figure string
		atN    float64
		linear bool
	}{
		{"sidecar CPU", 5.0, true},
		{"sidecar memory", 100 + 50*49, false}, // 100 then 75 per tenant: 25% apart
		{"sidecar containers", 250, true},
		{"sidecar CPU requested", 25, true},
		{"sidecar memory requested", 128, true}, // the same at both: fixed
	} {
		e, ok := got[w.figure]
		if !ok {
			t.Errorf("no extrapolation of %s (have %v)", w.figure, got)
			continue
		}
		if math.Abs(e.AtN-w.atN) > 1e-6 || e.Linear() != w.linear || e.N != 50 || e.K1 != 1 || e.K2 != 2 {
			t.Errorf("%s: %+v (disagreement %g), want %g at 50 tenants, linear %v", w.figure, e, e.Disagreement(), w.atN, w.linear)
		}
	}
	if e := got["sidecar memory requested"]; !e.Fixed() || got["sidecar CPU"].Fixed() {
		t.Error("a figure equal at both counts is not fixed, or one that grew is")
	}
	if _, ok := got["baseline app CPU requested"]; ok {
		t.Error("requests extrapolated though none was set")
	}
	// A run not scaled by tenants extrapolates nothing.
	d := tenantDataset(v, alloc, nil)
	d.Index.Provenance.Scaling = &results.Scaling{Mode: "calibrated"}
	if es := d.Extrapolations(); es != nil {
		t.Errorf("calibrated run extrapolated %d figures", len(es))
	}
}
