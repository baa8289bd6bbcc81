package study

import (
	"slices"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
)

// TestParseThresholds: a study's thresholds parse in both forms YAML
// allows, the unquoted "mesh: threshold" read as the same string, and a
// threshold of a mesh left out on this platform goes with its mesh.
func TestParseThresholds(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-thresholds.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	want := []analysis.ThresholdText{
		"p99_added_ms < 5",
		"sidecar: capacity_ratio > 0.5",
		"ambient: cpu_cores_per_1000rps <= 0.8",
		"baseline: capacity_rps >= 10",
		"p50_added_ms<2.5",
	}
	if !slices.Equal(s.Thresholds, want) {
		t.Errorf("thresholds %q, want %q", s.Thresholds, want)
	}
	// On Kubernetes the linkerd mesh is part of the study, and so is its
	// threshold.
	k, _, err := LoadFile("testdata/valid-thresholds.yaml", PlatformOverride{Type: PlatformKubernetes, Image: "registry.example/meshbench:v1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(k.Thresholds, "linkerd: p99_added_ms < 3") {
		t.Errorf("on kubernetes, thresholds %q lack linkerd's", k.Thresholds)
	}
}
