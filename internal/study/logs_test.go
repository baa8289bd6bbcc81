package study

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/confined"
)

// TestRunGivesEachMeasurementALogDir checks that the platform keeps its
// pods' logs in the results, and that every measurement, calibration's
// included, has its own log directory there, which the cells do not
// record as part of their load.
func TestRunGivesEachMeasurementALogDir(t *testing.T) {
	t.Parallel()
	src := `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: logs
workload: {graph: small-graph.yaml}
meshes: [{profile: sidecar}]
load: {rate: 100, duration: 10s}
repetitions: 2
scaling: {}
`
	f := newFake()
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, src, f, dir, nil))
	if want := "open lab " + filepath.Join(dir, "logs", "pods"); !slices.Contains(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	// Each deployment calibrates before its cells; the second measures
	// the first's reference alone, under a name of its own.
	want := []string{"calibration-baseline", "calibration-sidecar"}
	for _, c := range ix.Cells {
		if c.Deployment == 2 && !strings.HasPrefix(want[len(want)-1], "calibration-d2-") {
			want = append(want, "calibration-d2-"+ix.Provenance.Deployments[0].Scaling.Reference)
		}
		want = append(want, c.ID)
	}
	if len(f.logDirs) != len(want) {
		t.Fatalf("%d measurements with log directories %q, want %d", len(f.logDirs), f.logDirs, len(want))
	}
	for i, id := range want {
		if f.logDirs[i] != (confined.Dir{Root: dir, Name: filepath.Join("logs", "cells", id)}) {
			t.Errorf("measurement %d (%s) logs to %q", i+1, id, f.logDirs[i])
		}
	}
	for _, s := range ix.Cells {
		b, err := os.ReadFile(filepath.Join(dir, s.File))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), filepath.Join("logs", "cells")) {
			t.Errorf("cell %s records its log directory as part of its load", s.ID)
		}
	}
}
