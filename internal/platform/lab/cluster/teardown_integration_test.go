package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/testenv"
)

// A lab whose owner is killed with SIGKILL takes its pods' processes with
// it but leaves namespaces and cgroups behind; Teardown removes them all.
func TestIntegrationTeardownAfterKill9(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	prefix := testPrefix(t)
	state := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command(helperBin(t))
	cmd.Env = append(os.Environ(), "MB_LAB_HELPER=up", "MB_PREFIX="+prefix, "MB_STATE="+state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = Teardown(ctx, TeardownOptions{Prefix: prefix, StateDir: state})
	})
	lines := readLines(out.(*os.File))
	select {
	case line := <-lines:
		if line != "ready" {
			t.Fatalf("lab owner: %s", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lab owner not ready in 30 s")
	}
	st, err := ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range st.Pods {
		for _, c := range p.Containers {
			pids = append(pids, c.PID)
		}
	}
	if len(pids) != 2 {
		t.Fatalf("state lists %d container pids, want 2: %+v", len(pids), st.Pods)
	}
	_ = cmd.Process.Signal(unix.SIGKILL)
	_ = cmd.Wait()

	if ns, _ := listNetns(prefix); len(ns) != 5 { // cloud, 2 nodes, 2 pods
		t.Fatalf("before teardown: namespaces %v, want 5", ns)
	}
	// The pods' processes die with their owner (a parent-death signal);
	// what a process cannot take with it, Teardown removes.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pod process %d outlived its owner", pid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Teardown(ctx, TeardownOptions{Prefix: prefix, StateDir: state}); err != nil {
		t.Fatal(err)
	}
	if ns, _ := listNetns(prefix); len(ns) != 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pod process %d still alive", pid)
		}
	}
	for _, d := range st.Cgroups.hierarchies() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left: %v", d, err)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state directory left: %v", err)
	}
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}
