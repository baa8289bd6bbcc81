package cluster

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/testenv"
)

// TestIntegrationTeardownOrphans removes the lab whose owner is gone and
// leaves the one whose owner runs, in a state root of its own.
func TestIntegrationTeardownOrphans(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	selfStart, err := hostsafe.ProcStart(self)
	if err != nil {
		t.Fatal(err)
	}
	// Each lab's cgroups are real ones, where the lab would make them:
	// a state naming any other directory is refused.
	write := func(name string, owner int, start uint64) []string {
		dir := filepath.Join(root, name)
		prefix := testPrefix(t)
		cg, err := realHost().detectCgroups(prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = removeAll(context.Background(), realHost(), prefix, "", []cgroups{cg}, discardLogger()) })
		dirs := []string{dir}
		for _, top := range cg.hierarchies() {
			dirs = append(dirs, filepath.Join(top, "n-app"))
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		st := State{Name: name, Prefix: prefix, StateDir: dir, Owner: owner, OwnerStart: start, Cgroups: cg}
		b, _ := json.Marshal(st)
		if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return cg.hierarchies()
	}
	goneCg := write("gone", dead.Process.Pid, 1)
	write("alive", self, selfStart)
	removed, err := TeardownOrphans(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Name != "gone" || removed[0].OwnerAlive {
		t.Fatalf("removed %+v, want only the lab whose owner is gone", removed)
	}
	for _, p := range append([]string{filepath.Join(root, "gone")}, goneCg...) {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "alive", stateFileName)); err != nil {
		t.Errorf("the live lab's state was touched: %v", err)
	}
}
