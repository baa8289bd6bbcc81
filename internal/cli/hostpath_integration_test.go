package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/testenv"
)

// hostPathStudy is the demo's path at its smallest: baseline, sidecar and
// ambient, calibrated, one short repetition each.
const hostPathStudy = "testdata/hostpath.yaml"

// hostPathProxies is the proxy role each of the study's meshes must have
// measured, beside the app.
var hostPathProxies = map[string]metrics.Role{
	"sidecar": metrics.RoleSidecar,
	"ambient": metrics.RoleNodeProxy,
}

// TestIntegrationHostPath runs what a user runs first, through the binary,
// on whatever host it is on: doctor, then the demo's path at a reduced
// size, ending in a report. Every cell must be ok, pass every
// verification check, and have non-zero CPU and memory for every proxy
// and app; lab down must then leave nothing of the lab, and so must a run
// killed with SIGKILL while it measures, followed by lab down. The suite
// runs it on this project's cgroup v1 machines, and scripts/test.sh runs
// it again in the cgroup v2 guest under systemd that scripts/vmhost.sh
// boots, from a login session, as a user runs meshbench with sudo.
func TestIntegrationHostPath(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy for the sidecar and ambient: %v", err)
	own, _ := os.ReadFile("/proc/self/cgroup")
	t.Logf("host: %s; this test's cgroup: %s", cgroupMode(), strings.TrimSpace(string(own)))
	host := snapshotHost(t)
	dir := t.TempDir()
	// --shared-host: other labs may run on this host's CPUs, and an
	// emulated guest's CPUs are slow and uneven; this test proves the
	// path, not the figures.
	if out, err := exec.Command(bin, "doctor", hostPathStudy, "--shared-host", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("meshbench doctor: %v\n%s", err, out)
	}

	t.Run("run-report-down", func(t *testing.T) {
		res := filepath.Join(dir, "results")
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, "run", hostPathStudy, "--out", res, "--shared-host", "-v")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		t.Logf("meshbench run took %s", time.Since(start).Round(time.Second))
		if err != nil {
			t.Fatalf("meshbench run: %v\n%s", err, tail(stderr.String(), 60))
		}
		m := regexp.MustCompile(`msg="the run's lab" name=(\w+)`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("meshbench run never named its lab:\n%s", tail(stderr.String(), 60))
		}
		checkHostPathResults(t, res)
		if out, err := exec.Command(bin, "report", res).CombinedOutput(); err != nil {
			t.Fatalf("meshbench report: %v\n%s", err, out)
		}
		for _, f := range []string{"report.md", "report.html"} {
			if fi, err := os.Stat(filepath.Join(res, f)); err != nil || fi.Size() == 0 {
				t.Errorf("meshbench report wrote no %s: %v", f, err)
			}
		}
		if out, err := exec.Command(bin, "lab", "down", "--name", m[1]).CombinedOutput(); err != nil {
			t.Fatalf("lab down --name %s: %v\n%s", m[1], err, out)
		}
		host.assertNothingLeft(t, m[1])
	})

	t.Run("kill-9-then-down", func(t *testing.T) {
		cmd := exec.Command(bin, "run", hostPathStudy, "--out", filepath.Join(dir, "killed"), "--shared-host", "-v")
		// The last mesh installed has the most of the lab up: node proxies
		// and their rules beside the apps.
		name := killAt(t, cmd, regexp.MustCompile(`msg=measuring cell=ambient`), 500*time.Millisecond)
		assertNoProcesses(t, name)
		if out, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput(); err != nil {
			t.Fatalf("lab down --name %s: %v\n%s", name, err, out)
		}
		host.assertNothingLeft(t, name)
	})
}

// checkHostPathResults checks a finished run of hostPathStudy: complete,
// every planned cell ok and verified, and every app and proxy measured
// with non-zero CPU and memory. It logs each cell's figures, which are
// defined alike on every host (docs/results.md).
func checkHostPathResults(t *testing.T, dir string) {
	t.Helper()
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete || len(ix.Cells) != ix.Planned || ix.Planned != 3 {
		t.Errorf("run complete %v with %d of %d planned cells; want 3 cells, complete", ix.Complete, len(ix.Cells), ix.Planned)
	}
	t.Logf("platform: %+v", ix.Provenance.Platform)
	if sc := ix.Provenance.Scaling; sc != nil {
		t.Logf("calibrated capacities %v req/s (reference %s), load scaled by %.4g", sc.Capacities, sc.Reference, sc.Factor)
	}
	for _, s := range ix.Cells {
		if s.Status != results.StatusOK {
			t.Errorf("cell %s: %s: %s", s.ID, s.Status, s.Reason)
		}
		if s.Noisy && s.HostNoise != nil {
			t.Logf("cell %s: noisy (host noise %.2f cores)", s.ID, *s.HostNoise)
		}
		if len(s.Verification) == 0 {
			t.Errorf("cell %s: no verification checks", s.ID)
		}
		for _, c := range s.Verification {
			if !c.Pass || c.Unverified != "" {
				t.Errorf("cell %s: check %s did not pass (%s%s)", s.ID, c.Name, c.Detail, c.Unverified)
			}
		}
		cell, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		roles := map[metrics.Role]int{}
		for _, r := range cell.Resources {
			role := r.Component.Role
			if role != metrics.RoleApp && !role.DataPlane() {
				continue
			}
			roles[role]++
			cpu, mem := r.MeanCPU(), r.MeanMemory()
			c := r.Component
			t.Logf("cell %s: %s %s/%s/%s on %s: %d samples, CPU %.4f cores, working set %.1f MiB",
				s.ID, role, c.Namespace, c.Pod, c.Container, c.Node, len(r.Samples), cpu, mem/(1<<20))
			if cpu <= 0 || mem <= 0 {
				t.Errorf("cell %s: %s %s/%s/%s: CPU %g cores, working set %g bytes; want both above zero",
					s.ID, role, c.Namespace, c.Pod, c.Container, cpu, mem)
			}
		}
		if roles[metrics.RoleApp] == 0 {
			t.Errorf("cell %s: no app measured", s.ID)
		}
		if p, ok := hostPathProxies[s.Profile]; ok && roles[p] == 0 {
			t.Errorf("cell %s: no %s measured", s.ID, p)
		}
	}
}

// cgroupMode says which cgroup layout the host mounts, for the log.
func cgroupMode() string {
	mode := "cgroup v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		mode = "cgroup v2 unified"
	}
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		return mode + " under systemd"
	}
	return mode + " without systemd"
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
