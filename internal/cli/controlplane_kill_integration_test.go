//go:build !labonly

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/meshbench/meshbench/internal/cpstudy"
	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/testenv"
)

// The control-plane study killed with SIGKILL once its local control
// plane is up leaves its mbcp-<pid> cgroups and the control plane's
// directory (etcd's data, the API server's keys), none of it open to
// other users; `meshbench lab down --dry-run` lists them and `meshbench
// lab down` removes them (it knew neither).
func TestIntegrationLabDownRemovesKilledControlPlaneStudy(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the built binary (make build; scripts/test.sh sets it)")
	c := cpstudy.DefaultConfig()
	k8sErr := localkube.CheckBinaries(c.K8sBinDir)
	testenv.Need(t, k8sErr == nil, "%v", k8sErr)
	_, istiodErr := istiod.Find(c.IstiodDir)
	testenv.Need(t, istiodErr == nil, "%v", istiodErr)

	cmd := exec.Command(bin, "run", "--study", cpstudy.Name, "--cp-pods", "100", "--out", filepath.Join(t.TempDir(), "cp"), "-v")
	out := strings.Join(signalOnLine(t, cmd, regexp.MustCompile(`msg="local control plane up"`), 0, syscall.SIGKILL), "\n")
	m := regexp.MustCompile(`msg="local control plane up" dir=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no working directory in the study's log:\n%s", out)
	}
	dir, pid := m[1], cmd.Process.Pid
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	cgroups := studyCgroups(t, pid)
	for _, p := range append([]string{dir}, cgroups...) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the killed study left no %s to remove: %v", p, err)
		}
	}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		// stages/ holds the objects the study applies, no secret; the
		// directory itself (0750) keeps other users out of all of it.
		inStages := filepath.Base(p) == "stages" || filepath.Base(filepath.Dir(p)) == "stages"
		if err == nil && fi.Mode().Perm()&0o007 != 0 && !inStages {
			t.Errorf("%s is open to other users (mode %s)", p, fi.Mode())
		}
		return nil
	})

	want := "control-plane study pid " + strconv.Itoa(pid)
	dry, err := exec.Command(bin, "lab", "down", "--dry-run").CombinedOutput()
	if err != nil || !strings.Contains(string(dry), "would remove "+want+": file "+dir) {
		t.Errorf("lab down --dry-run: %v; want %q with its directory in:\n%s", err, want, dry)
	}
	down, err := exec.Command(bin, "lab", "down").CombinedOutput()
	if err != nil || !strings.Contains(string(down), "removed "+want) {
		t.Errorf("lab down: %v; want %q in:\n%s", err, want, down)
	}
	for _, p := range append([]string{dir}, cgroups...) {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("lab down left %s (%v)", p, err)
			if strings.HasPrefix(p, "/sys/fs/cgroup/") {
				_ = os.Remove(filepath.Join(p, "istiod"))
				_ = os.Remove(filepath.Join(p, "rest"))
				_ = os.Remove(p)
			}
		}
	}
}

// studyCgroups are where the study pid made its top cgroups: below the
// cgroup it started in (this test's), in each v1 hierarchy it uses.
func studyCgroups(t *testing.T, pid int) []string {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" || c == "cpuset" || c == "cpuacct" {
				out = append(out, filepath.Join("/sys/fs/cgroup", c, f[2], "mbcp-"+strconv.Itoa(pid)))
			}
		}
	}
	testenv.Need(t, len(out) > 0, "cgroup v1 memory, cpuset and cpuacct hierarchies (the control-plane study's)")
	return out
}
