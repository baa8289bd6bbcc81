package lab

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// `meshbench lab up` leaves a detached supervisor; when it is killed with
// SIGKILL, its pods' processes die with it, and `lab down` (Teardown)
// still removes every namespace, cgroup and file.
func TestIntegrationLabUpKill9Down(t *testing.T) {
	bin := needLab(t)
	prefix := testPrefix()
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.yaml")
	clusterYAML := "name: " + prefix + "\nprefix: " + prefix + `
nodes:
  - {name: app, role: app}
  - {name: load, role: load}
workload: {graph: tiered, namespaces: 1}
`
	if err := os.WriteFile(file, []byte(clusterYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stateDir := filepath.Join(cluster.DefaultStateRoot, prefix)
	t.Cleanup(func() {
		_ = cluster.Teardown(context.Background(), cluster.TeardownOptions{Name: prefix, Prefix: prefix})
	})
	if err := Start(ctx, file, Options{Bin: bin}); err != nil {
		t.Fatal(err)
	}
	st, err := cluster.ReadState(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range st.Pods {
		for _, c := range p.Containers {
			if !c.Ready {
				t.Errorf("lab up returned with %s not ready", p.Key())
			}
			pids = append(pids, c.PID)
		}
	}
	if len(pids) != 4 {
		t.Fatalf("state lists %d app containers, want 4", len(pids))
	}
	if err := syscall.Kill(st.Owner, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The pods' processes die with their owner (a parent-death signal),
	// so a killed supervisor leaves nothing running that burns CPU.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("pod process %d outlived the supervisor that owns it", pid)
		}
	}
	// What a process cannot take with it, lab down removes.
	if err := cluster.Teardown(ctx, cluster.TeardownOptions{Name: prefix}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("pod process %d survived lab down", pid)
		}
	}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix+"-") {
			t.Errorf("network namespace %s survived lab down", e.Name())
		}
	}
	if len(st.Cgroups.Dirs) == 0 {
		t.Error("the state names no cgroups")
	}
	for _, d := range st.Cgroups.Dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s survived lab down", d)
		}
	}
	for _, p := range []string{stateDir, cluster.SupervisorLog(stateDir)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived lab down", p)
		}
	}
}

// running reports whether a process exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	return !strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}
