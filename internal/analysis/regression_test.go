package analysis

import (
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

func TestRegressionsFindsASyntheticRegression(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1})
	// The same study again: new noise, and the sidecar 30% slower.
	b := loadWritten(t, resultstest.Options{Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 1.3}})
	regs := Regressions(a, b)
	if len(regs) == 0 {
		t.Fatal("no regression found in a sidecar 30% slower")
	}
	seen := map[Metric]bool{}
	for _, r := range regs {
		if r.Mesh != resultstest.Sidecar {
			t.Errorf("%s %s at %s counted as a regression (%+v); only the sidecar slowed", r.Mesh, r.Metric, r.Config.Label(), r.Diff)
		}
		if r.Diff.Pct.Median < RegressionMinPct || r.Diff.Delta.Lo <= 0 {
			t.Errorf("%s %s: %+v is not beyond its interval and the threshold", r.Mesh, r.Metric, r.Diff)
		}
		seen[r.Metric] = true
	}
	for _, m := range []Metric{P50, CPUPerRequest} {
		if !seen[m] {
			t.Errorf("no %s regression found; got %v", m, seen)
		}
	}
}

func TestRegressionsNoneWhenIdentical(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1})
	b := loadWritten(t, resultstest.Options{Seed: 1})
	if regs := Regressions(a, b); len(regs) != 0 {
		t.Errorf("identical result sets: %d regressions, first %+v", len(regs), regs[0])
	}
	// Other noise, same model: nothing beyond the threshold either.
	c := loadWritten(t, resultstest.Options{Seed: 3})
	for _, r := range Regressions(a, c) {
		t.Errorf("noise alone counted as a regression: %s %s at %s %+v", r.Mesh, r.Metric, r.Config.Label(), r.Diff)
	}
}

func TestIsRegressionThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    Metric
		d    Diff
		want bool
	}{
		{"worse beyond interval and threshold", P50, Diff{Delta: Estimate{Median: 1, Lo: 0.5, Hi: 1.5, N: 5}, Pct: Estimate{Median: 10, Lo: 5, Hi: 15, N: 5}}, true},
		{"worse beyond interval, below threshold", P50, Diff{Delta: Estimate{Median: 0.1, Lo: 0.05, Hi: 0.15, N: 5}, Pct: Estimate{Median: 2, Lo: 1, Hi: 3, N: 5}}, false},
		{"interval includes zero", P99, Diff{Delta: Estimate{Median: 1, Lo: -0.5, Hi: 2, N: 5}, Pct: Estimate{Median: 10, Lo: -5, Hi: 20, N: 5}}, false},
		{"better", CPUPerRequest, Diff{Delta: Estimate{Median: -1, Lo: -1.5, Hi: -0.5, N: 5}, Pct: Estimate{Median: -10, Lo: -15, Hi: -5, N: 5}}, false},
		{"a figure the gate does not judge", P90, Diff{Delta: Estimate{Median: 1, Lo: 0.5, Hi: 1.5, N: 5}, Pct: Estimate{Median: 10, Lo: 5, Hi: 15, N: 5}}, false},
		{"too few runs", P50, Diff{Delta: Estimate{Median: 1, Lo: 1, Hi: 1, N: 1}, Pct: Estimate{Median: 10, Lo: 10, Hi: 10, N: 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (Change{Metric: tt.m, Diff: tt.d}).IsRegression(); got != tt.want {
				t.Errorf("IsRegression = %v, want %v", got, tt.want)
			}
		})
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
			want:  []ReleasePair{{Older: "old", Newer: "new", OlderRelease: "1.38.3", NewerRelease: "1.40.0"}},
		},
		{
			name:     "the default Envoy, as recorded, against a named release",
			specs:    map[string]mesh.MeshSpec{"default": sc(""), "old": sc("1.9.0")},
			recorded: map[string]string{"default": "1.10.0"},
			order:    []string{"default", "old"},
			want:     []ReleasePair{{Older: "old", Newer: "default", OlderRelease: "1.9.0", NewerRelease: "1.10.0"}},
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
