package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The cgroup v2 logic on a fake tree (this host has cgroup v1): lab up
// turns on in its parent's cgroup.subtree_control only the controllers
// that were off, records them in its state, and lab down, from that state
// alone (as after a kill -9), turns off those another child of the parent
// does not pass on. Plain files stand in for the kernel's: a write
// replaces the file, so the test reads each write and then sets the file
// to what the kernel would show.
func TestCgroupV2SubtreeControlRestored(t *testing.T) {
	root := t.TempDir()
	parent := filepath.Join(root, "user.slice", "session-1.scope")
	other := filepath.Join(parent, "mbo-lab") // another lab, started from the same cgroup
	for _, d := range []string{parent, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	write(filepath.Join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n")
	parentCtl := filepath.Join(parent, "cgroup.subtree_control")
	write(parentCtl, "memory pids\n")
	write(filepath.Join(other, "cgroup.subtree_control"), "cpuset\n")

	cg, err := detectCgroupsAt(root, "0::/user.slice/session-1.scope\n", "mbf")
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(parent, "mbf-lab")
	if !cg.V2 || cg.Dirs[""] != top || !slices.Equal(cg.Enabled, []string{"cpu", "cpuset"}) {
		t.Fatalf("detected %+v; want v2 at %s turning on cpu and cpuset (memory was on)", cg, top)
	}
	if err := cg.setupTop(); err != nil {
		t.Fatal(err)
	}
	if got := read(parentCtl); got != "+cpu +cpuset" {
		t.Errorf("parent's subtree_control written %q, want only what was off: +cpu +cpuset", got)
	}
	if got := read(filepath.Join(top, "cgroup.subtree_control")); got != "+cpu +memory +cpuset" {
		t.Errorf("lab's subtree_control written %q", got)
	}
	write(parentCtl, "cpuset cpu memory pids\n")

	// lab down reads the state file the lab wrote.
	b, err := json.Marshal(State{Cgroups: cg})
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(top, "cgroup.subtree_control")); err != nil { // the kernel's rmdir ignores its files
		t.Fatal(err)
	}
	if err := removeAll(context.Background(), "mbf", "", []cgroups{st.Cgroups}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(top); !os.IsNotExist(err) {
		t.Errorf("lab's cgroup left: %v", err)
	}
	if got := read(parentCtl); got != "-cpu" {
		t.Errorf("parent's subtree_control written %q at lab down, want -cpu (cpuset is the other lab's, memory was on before)", got)
	}
}

// A lab that turned nothing on turns nothing off.
func TestCgroupV2NothingToRestore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	parent := filepath.Join(root, "svc")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	for path, s := range map[string]string{filepath.Join(root, "cgroup.controllers"): "cpuset cpu memory", ctl: "cpuset cpu memory"} {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cg, err := detectCgroupsAt(root, "0::/svc\n", "mbn")
	if err != nil || len(cg.Enabled) != 0 {
		t.Fatalf("detected %+v, %v; want nothing to turn on", cg, err)
	}
	if kept, err := cg.restoreParent(); err != nil || kept != nil {
		t.Errorf("restore: %v, %v", kept, err)
	}
	if b, _ := os.ReadFile(ctl); string(b) != "cpuset cpu memory" {
		t.Errorf("parent's subtree_control rewritten: %q", b)
	}
}
