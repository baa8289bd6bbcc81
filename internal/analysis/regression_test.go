package analysis

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// loadWritten writes a synthetic result set and loads it.
func loadWritten(t *testing.T, o resultstest.Options) *Dataset {
	t.Helper()
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gateAt compares b with a on the default family at one configuration.
func gateAt(a, b *Dataset, c LoadConfig) (*Comparison, GateResult) {
	cmp := Compare(a, b, append(slices.Clip(RegressionMetrics), CPUPerAppCPU))
	return cmp, cmp.Gate(GateSpec{Figures: DefaultGate, Config: c.Key})
}

// The default gate's CPU figure divides out the host's speed: B measured
// on a host on which every process takes 30% more CPU time for the same
// work (its CPU per request regresses with it) is no regression, while a
// sidecar that itself costs 20% more CPU is, in CPU per app CPU.
func TestDefaultGateDividesOutTheHostSpeed(t *testing.T) {
	t.Parallel()
	c := cfg(32, 4)
	a := loadWritten(t, resultstest.Options{Seed: 1})
	slow := loadWritten(t, resultstest.Options{Seed: 2, HostSpeed: 1.3})
	cmp, r := gateAt(a, slow, c)
	for _, reg := range r.Regressions {
		t.Errorf("a slower host counted as a regression: %s %+v", reg, reg.Diff)
	}
	perRequest := cmp.Gate(GateSpec{Figures: []string{string(CPUPerRequest)}, Config: c.Key})
	if len(perRequest.Regressions) == 0 {
		t.Errorf("CPU per request on the slower host did not regress: the test cannot tell the figures apart")
	}
	costlier := loadWritten(t, resultstest.Options{Seed: 2, ProxyCPU: map[string]float64{resultstest.Sidecar: 1.2}})
	_, r = gateAt(a, costlier, c)
	found := false
	for _, reg := range r.Regressions {
		if reg.Mesh != resultstest.Sidecar || reg.Name() != string(CPUPerAppCPU) {
			t.Errorf("%s regressed; only the sidecar's CPU rose", reg)
		}
		found = true
	}
	if !found {
		t.Errorf("a sidecar 20%% costlier in CPU is no regression in the default gate (family %d)", r.Family)
	}
}

func TestGateFindsASyntheticRegression(t *testing.T) {
	t.Parallel()
	// An open loop, whose added latency is the gate's (a closed loop's is
	// its throughput: TestCompareClosedLoopGatesOnThroughput).
	a := loadWritten(t, resultstest.Options{Seed: 1, Rate: 100})
	// The same study again: new noise, and the sidecar 30% slower.
	b := loadWritten(t, resultstest.Options{Seed: 2, Rate: 100, Slowdown: map[string]float64{resultstest.Sidecar: 1.3}})
	c, r := gateAt(a, b, cfg(32, 4))
	if !r.Reachable || r.Family == 0 {
		t.Fatalf("gate over %d figures of six deployments a side is not reachable: %+v", r.Family, r)
	}
	seen := map[string]bool{}
	for _, reg := range r.Regressions {
		if reg.Mesh != resultstest.Sidecar {
			t.Errorf("%s counted as a regression (%+v); only the sidecar slowed", reg, reg.Diff)
		}
		if reg.Diff.Pct.Median < RegressionMinPct || !reg.Gated || reg.P > GateAlpha {
			t.Errorf("%s: %+v (p %v) is not a gated change beyond the threshold", reg, reg.Diff, reg.P)
		}
		seen[reg.Name()] = true
	}
	// The fixture's proxies burn CPU in proportion to the requests they
	// carry, so a slower sidecar costs about as much per request: only
	// its latency regresses.
	for _, f := range []string{"added:p50", "added:p99"} {
		if !seen[f] {
			t.Errorf("no %s regression found; got %v", f, seen)
		}
	}
	for _, ch := range c.Changes {
		if ch.Regression && (!ch.Gated || ch.Config.Key != cfg(32, 4).Key) {
			t.Errorf("%s is outside the family and regressed", ch)
		}
	}
}

func TestGateNoneWhenIdentical(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1})
	b := loadWritten(t, resultstest.Options{Seed: 1})
	if _, r := gateAt(a, b, cfg(32, 4)); len(r.Regressions) != 0 {
		t.Errorf("identical result sets: %d regressions, first %+v", len(r.Regressions), r.Regressions[0])
	}
	// Other noise, same model: nothing either.
	c := loadWritten(t, resultstest.Options{Seed: 3})
	for _, ch := range gateRegressions(a, c) {
		t.Errorf("noise alone counted as a regression: %s %+v", ch, ch.Diff)
	}
}

func gateRegressions(a, b *Dataset) []Change {
	_, r := gateAt(a, b, cfg(32, 4))
	return r.Regressions
}

// TestGateUnreachable: three deployments a side give a smallest p-value
// of 1/20, above Holm's first threshold for a family of several.
func TestGateUnreachable(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1})
	b := loadWritten(t, resultstest.Options{Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 2}})
	_, r := gateAt(a, b, cfg(32, 1))
	if r.Reachable || len(r.Regressions) != 0 || math.Abs(r.SmallestP-1.0/20) > 1e-9 {
		t.Errorf("three units a side: %+v, want an unreachable gate with smallest p 1/20", r)
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ps   []float64
		want []bool
	}{
		// 0.01 <= 0.05/4, 0.015 <= 0.05/3, 0.03 > 0.05/2: stop there.
		{[]float64{0.03, 0.01, 0.5, 0.015}, []bool{false, true, false, true}},
		{[]float64{0.02, 0.02}, []bool{true, true}},
		{[]float64{0.06, 0.02}, []bool{false, true}},
		{[]float64{0.013, 0.5, 0.5, 0.5}, []bool{false, false, false, false}},
		{nil, []bool{}},
	}
	for _, tt := range tests {
		if got := Holm(tt.ps, 0.05); !slices.Equal(got, tt.want) {
			t.Errorf("Holm(%v) = %v, want %v", tt.ps, got, tt.want)
		}
	}
}

func TestParseGateFigures(t *testing.T) {
	t.Parallel()
	if got, err := ParseGateFigures("added:p50, p99,dp_cpu_us_per_req"); err != nil || !slices.Equal(got, []string{"added:p50", "p99", "dp_cpu_us_per_req"}) {
		t.Errorf("ParseGateFigures = %v, %v", got, err)
	}
	for _, bad := range []string{"", "added:qps", "p42"} {
		if _, err := ParseGateFigures(bad); err == nil {
			t.Errorf("ParseGateFigures(%q) accepted", bad)
		}
	}
}

// releaseDataset is one configuration of meshes, each with reps of the
// given spec and, where set, the release its verification recorded.
func releaseDataset(specs map[string]mesh.MeshSpec, recorded map[string]string, order []string) *Dataset {
	d := &Dataset{Meshes: order, groups: map[string]*Group{}}
	c := newConfig(nil)
	d.Configs = []LoadConfig{c}
	for _, m := range order {
		var checks []mesh.Check
		if v := recorded[m]; v != "" {
			checks = []mesh.Check{{Name: "config", Pass: true, Facts: map[string]string{mesh.FactEnvoyVersion: v}}}
		}
		for range 3 {
			h := metrics.NewHistogram()
			h.RecordN(time.Millisecond, 100)
			d.group(m, c).add(&Rep{MeshSpec: specs[m], Summary: results.Summary{Mesh: m, Verification: checks}, Values: map[Metric]float64{P50: 1}}, h)
		}
	}
	return d
}

func TestReleasePairs(t *testing.T) {
	t.Parallel()
	sc := func(v string) mesh.MeshSpec { return mesh.MeshSpec{Profile: "sidecar", ProxyVersion: v} }
	tests := []struct {
		name     string
		specs    map[string]mesh.MeshSpec
		recorded map[string]string
		order    []string
		want     []ReleasePair
	}{
		{
			name:  "two releases, newer listed first",
			specs: map[string]mesh.MeshSpec{"new": sc("1.40.0"), "old": sc("1.38.3")},
			order: []string{"new", "old"},
			want:  []ReleasePair{{Older: "old", Newer: "new", OlderRelease: "1.38.3", NewerRelease: "1.40.0", Profile: "sidecar"}},
		},
		{
			name:     "the default Envoy, as recorded, against a named release",
			specs:    map[string]mesh.MeshSpec{"default": sc(""), "old": sc("1.9.0")},
			recorded: map[string]string{"default": "1.10.0"},
			order:    []string{"default", "old"},
			want:     []ReleasePair{{Older: "old", Newer: "default", OlderRelease: "1.9.0", NewerRelease: "1.10.0", Profile: "sidecar"}},
		},
		{
			name:  "other settings differ too",
			specs: map[string]mesh.MeshSpec{"a": sc("1.40.0"), "b": {Profile: "sidecar", ProxyVersion: "1.38.3", Workers: 4}},
			order: []string{"a", "b"},
		},
		{
			name:  "other profiles",
			specs: map[string]mesh.MeshSpec{"a": sc("1.40.0"), "b": {Profile: "ambient", ProxyVersion: "1.38.3"}},
			order: []string{"a", "b"},
		},
		{
			// A series of releases (the envoy-releases preset) is read
			// release after release: each against the one before, not
			// every pair, and a second profile's releases apart.
			name: "several releases, each against the one before",
			specs: map[string]mesh.MeshSpec{"s3": sc("1.39.0"), "s1": sc("1.36.2"), "s2": sc("1.38.3"),
				"w1": {Profile: "ambient-waypoint", ProxyVersion: "1.38.3"}, "w2": {Profile: "ambient-waypoint", ProxyVersion: "1.40.0"}},
			order: []string{"s3", "w2", "s1", "w1", "s2"},
			want: []ReleasePair{
				{Older: "s1", Newer: "s2", OlderRelease: "1.36.2", NewerRelease: "1.38.3", Profile: "sidecar"},
				{Older: "s2", Newer: "s3", OlderRelease: "1.38.3", NewerRelease: "1.39.0", Profile: "sidecar"},
				{Older: "w1", Newer: "w2", OlderRelease: "1.38.3", NewerRelease: "1.40.0", Profile: "ambient-waypoint"},
			},
		},
		{
			name:  "no release known",
			specs: map[string]mesh.MeshSpec{"a": sc(""), "b": sc("1.38.3")},
			order: []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := releaseDataset(tt.specs, tt.recorded, tt.order).ReleasePairs()
			if !slices.Equal(got, tt.want) {
				t.Errorf("ReleasePairs = %+v, want %+v", got, tt.want)
			}
		})
	}
}
