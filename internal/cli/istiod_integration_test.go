package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/testenv"
)

// istiodStudy is the smallest study with both configurations of the
// sidecar: its report must hold istiod's usage and the parity section.
// It checks accounting, not figures, so no cell is left out for host
// noise from other work on a shared test machine; 5 s of load, since an
// idle istiod may use no CPU at all in a shorter window.
const istiodStudy = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: istiod-cell
workload: {graph: tiered}
meshes:
- profile: baseline
- profile: sidecar
- {name: sidecar-istiod, profile: sidecar, control_plane: istiod}
load: {rate: 20, connections: 4, duration: 5s, warmup: 1s}
repetitions: 1
order: {seed: 7}
noise: {threshold: 100, retries: 0}
`

// TestIntegrationIstiodCellReported runs a study with a sidecar-istiod
// mesh through `meshbench run` and `meshbench report`: istiod must be a
// measured component of its cell (its own series, role control-plane,
// with CPU and memory above zero) and the report must show it and the
// configuration parity of the two sidecars. Without istiod's build or the
// API server it fails under MESHBENCH_REQUIRE_INTEGRATION=1.
func TestIntegrationIstiodCellReported(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy for the sidecars: %v", err)
	err = dataplane.IstiodPrerequisites()
	testenv.Need(t, err == nil, "istiod and the local API server (scripts/istiod-build.sh, scripts/k8s-testbin.sh): %v", err)

	dir := t.TempDir()
	studyFile := filepath.Join(dir, "istiod.yaml")
	if err := os.WriteFile(studyFile, []byte(istiodStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	if b, err := exec.Command(bin, "run", studyFile, "--out", out, "--shared-host").CombinedOutput(); err != nil {
		t.Fatalf("meshbench run: %v\n%s", err, b)
	}
	ix, err := results.ReadIndex(out)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range ix.Cells {
		if s.Status != results.StatusOK {
			t.Errorf("cell %s: %s (%s), want ok", s.ID, s.Status, s.Reason)
			continue
		}
		cell, err := results.ReadCell(out, s)
		if err != nil {
			t.Fatal(err)
		}
		var cp []metrics.Series
		for _, r := range cell.Resources {
			if r.Component.Role == metrics.RoleControlPlane {
				cp = append(cp, r)
			}
		}
		if s.Mesh != "sidecar-istiod" {
			if len(cp) != 0 {
				t.Errorf("mesh %s has a control plane measured: %+v", s.Mesh, cp[0].Component)
			}
			continue
		}
		found = true
		if len(cp) != 1 {
			t.Fatalf("sidecar-istiod cell has %d control-plane series, want istiod's", len(cp))
		}
		c := cp[0].Component
		if c.Pod != "istiod" || c.Container != "discovery" || c.Node != "mesh" || c.Requirements.CPURequestMilli != 500 {
			t.Errorf("istiod measured as %+v, want pod istiod, container discovery, on the mesh node, requesting 500m", c)
		}
		if cp[0].MeanCPU() <= 0 || cp[0].MeanMemory() <= 0 {
			t.Errorf("istiod's CPU %g cores, memory %g bytes; want both above zero", cp[0].MeanCPU(), cp[0].MeanMemory())
		}
	}
	if !found {
		t.Fatal("no sidecar-istiod cell")
	}

	b, err := exec.Command(bin, "report", out, "-o", "markdown").CombinedOutput()
	if err != nil {
		t.Fatalf("meshbench report: %v\n%s", err, b)
	}
	report := string(b)
	for _, want := range []string{"Control plane CPU (cores)", "control plane (1)", "## Configuration parity", "| sidecar | sidecar-istiod |"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}
