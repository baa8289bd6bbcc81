package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// Under systemd on cgroup v2 the lab's cgroups live in a transient scope
// of its own: lab up starts it around a holder process, moves the holder
// to a leaf, and only then passes the controllers on, writing to no
// cgroup it did not create; lab down, from the state file alone (as after
// a kill -9), stops the scope, which kills the holder, and leaves nothing.
func TestCgroupV2SystemdScope(t *testing.T) {
	sd := &fakeSystemd{controllers: "cpuset cpu io memory pids"}
	h := newFakeHost(t, hostSpec{v2: true, systemd: true, sd: sd})
	ctx := context.Background()
	cg, err := h.detectCgroups("mbs")
	if err != nil {
		t.Fatal(err)
	}
	scope := filepath.Join(h.cgroupRoot, "system.slice", "meshbench-mbs.scope")
	top := filepath.Join(scope, "mbs-lab")
	if !cg.V2 || cg.Unit != "meshbench-mbs.scope" || cg.Scope != scope || cg.Dirs[""] != top {
		t.Fatalf("detected %+v; want the lab's top %s in scope %s", cg, top, scope)
	}
	if err := scopeFree(ctx, h, cg, "mbs"); err != nil {
		t.Fatal(err)
	}
	before := treeFiles(t, h.cgroupRoot)
	if err := cg.setupTop(ctx, h, "mbs"); err != nil {
		t.Fatal(err)
	}
	for path, s := range before {
		if got := treeFiles(t, h.cgroupRoot)[path]; got != s {
			t.Errorf("%s changed from %q to %q: a cgroup the lab did not create", path, s, got)
		}
	}
	holder := readTrim(t, filepath.Join(scope, "holder", "cgroup.procs"))
	pid, err := strconv.Atoi(holder)
	if err != nil || syscall.Kill(pid, 0) != nil {
		t.Fatalf("holder cgroup lists %q, want the live holder process", holder)
	}
	if got := readTrim(t, filepath.Join(scope, "cgroup.subtree_control")); got != "+cpu +memory +cpuset" {
		t.Errorf("scope's subtree_control written %q", got)
	}
	if got := readTrim(t, filepath.Join(top, "cgroup.subtree_control")); got != "+cpu +memory +cpuset" {
		t.Errorf("lab's subtree_control written %q", got)
	}
	if err := scopeFree(ctx, h, cg, "mbs"); err == nil {
		t.Error("a second lab with the same prefix was not refused while the scope runs")
	}

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
	if err := removeAll(ctx, h, "mbs", "", []cgroups{st.Cgroups}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if len(sd.running()) != 0 || len(sd.stopped) != 1 {
		t.Errorf("units running %v, stopped %v; want the lab's stopped", sd.running(), sd.stopped)
	}
	if _, err := os.Stat(scope); !os.IsNotExist(err) {
		t.Errorf("scope's cgroup left: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("holder %d still alive after lab down", pid)
	}
	// lab down again, as after a crash in lab down: nothing to do.
	if err := removeAll(ctx, h, "mbs", "", []cgroups{st.Cgroups}, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("second lab down: %v", err)
	}
}

// Where systemd places the scope is its business: the lab's top follows
// the scope's ControlGroup, not the path the lab expected.
func TestCgroupV2ScopeElsewhere(t *testing.T) {
	sd := &fakeSystemd{controllers: "cpuset cpu memory", slice: "machine.slice"}
	h := newFakeHost(t, hostSpec{v2: true, systemd: true, sd: sd})
	cg, err := h.detectCgroups("mbe")
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.setupTop(context.Background(), h, "mbe"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sd.StopUnit(context.Background(), cg.Unit) })
	want := filepath.Join(h.cgroupRoot, "machine.slice", "meshbench-mbe.scope")
	if cg.Scope != want || cg.Dirs[""] != filepath.Join(want, "mbe-lab") {
		t.Errorf("scope %s, top %s; want them under %s", cg.Scope, cg.Dirs[""], want)
	}
	if _, err := os.Stat(filepath.Join(want, "mbe-lab")); err != nil {
		t.Error(err)
	}
}

// Without systemd the lab's top is a directory below the root, which it
// creates and passes the controllers on from; the root itself is never
// written.
func TestCgroupV2NoSystemd(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t, hostSpec{v2: true, rootCtl: "cpuset cpu io memory pids\n"})
	cg, err := h.detectCgroups("mbn")
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(h.cgroupRoot, "mbn-lab")
	if cg.Unit != "" || cg.Dirs[""] != top {
		t.Fatalf("detected %+v; want %s and no unit", cg, top)
	}
	rootCtl := filepath.Join(h.cgroupRoot, "cgroup.subtree_control")
	if err := cg.setupTop(context.Background(), h, "mbn"); err != nil {
		t.Fatal(err)
	}
	if got := readTrim(t, rootCtl); got != "cpuset cpu io memory pids" {
		t.Errorf("root's subtree_control rewritten: %q", got)
	}
	if got := readTrim(t, filepath.Join(top, "cgroup.subtree_control")); got != "+cpu +memory +cpuset" {
		t.Errorf("lab's subtree_control written %q", got)
	}
	if err := os.Remove(filepath.Join(top, "cgroup.subtree_control")); err != nil {
		t.Fatal(err)
	}
	if err := removeAll(context.Background(), h, "mbn", "", []cgroups{cg}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(top); !os.IsNotExist(err) {
		t.Errorf("lab's cgroup left: %v", err)
	}
}

// With the lab's state gone (deleted, or another machine's /run), lab
// down --prefix still finds the lab's scope by its name, lists it in the
// dry run, and stops it.
func TestCgroupV2ScopeByPrefix(t *testing.T) {
	testenv.NeedRoot(t) // lab down checks root first
	sd := &fakeSystemd{controllers: "cpuset cpu memory"}
	h := newFakeHost(t, hostSpec{v2: true, systemd: true, sd: sd})
	ctx := context.Background()
	cg, err := h.detectCgroups("mbq")
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.setupTop(ctx, h, "mbq"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cg.Dirs[""], "cgroup.subtree_control")); err != nil {
		t.Fatal(err)
	}
	o := TeardownOptions{Prefix: "mbq", StateDir: filepath.Join(t.TempDir(), "gone")}
	r, err := h.inventory(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(r.Lines(), "\n")
	for _, w := range []string{"unit meshbench-mbq.scope", "cgroup " + cg.Scope, "cgroup " + cg.Dirs[""]} {
		if !strings.Contains(lines, w) {
			t.Errorf("dry run does not list %q:\n%s", w, lines)
		}
	}
	if len(sd.running()) != 1 {
		t.Fatalf("the dry run stopped the scope: running %v", sd.running())
	}
	if err := h.teardown(ctx, o); err != nil {
		t.Fatal(err)
	}
	if len(sd.running()) != 0 {
		t.Errorf("lab down --prefix left %v running", sd.running())
	}
	if _, err := os.Stat(cg.Scope); !os.IsNotExist(err) {
		t.Errorf("scope's cgroup left: %v", err)
	}
}
