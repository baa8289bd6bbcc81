package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatCPUs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{{[]int{0}, "0"}, {[]int{0, 1}, "0-1"}, {[]int{0, 1, 2, 4, 6, 7}, "0-2,4,6-7"}, {nil, ""}} {
		if got := formatCPUs(tc.in); got != tc.want {
			t.Errorf("formatCPUs(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBusyFinding writes the state of another lab whose cgroup holds this
// test process, and checks who is refused and how.
func TestBusyFinding(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cgRoot := t.TempDir() // the cgroup mounts, faked
	cg := filepath.Join(cgRoot, "user.slice", "gone-lab")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name string, owner int, cpus string) {
		st := State{Name: name, Prefix: name, Owner: owner, Cgroups: cgroups{V2: true, Dirs: map[string]string{"": cg}},
			Nodes: []Node{{Name: "app", CPUs: cpus}}}
		b, _ := json.Marshal(st)
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, stateFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gone", 0, "1") // pid 0: its owner is never alive
	tests := []struct {
		name    string
		self    string
		cpus    []string
		shared  bool
		ok      bool
		details []string
	}{
		{"other CPUs", "", []string{"0"}, false, true, []string{"no other lab"}},
		{"same CPU", "", []string{"0", "1"}, false, false, []string{"lab gone (owner pid 0 gone, 2 processes on CPUs 1)", "fix: meshbench lab down (removes gone"}},
		{"unpinned study", "", []string{""}, false, false, []string{"lab gone"}},
		{"shared host", "", []string{"1"}, true, true, []string{"shared host: measuring alongside lab gone"}},
		{"itself", "gone", []string{"1"}, false, true, []string{"no other lab"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			others, err := othersAt(root, cgRoot, tc.self)
			f := busyFinding(root, others, err, tc.cpus, tc.shared)
			if f.OK != tc.ok {
				t.Fatalf("OK = %v, want %v: %s", f.OK, tc.ok, f.Line())
			}
			for _, d := range tc.details {
				if !strings.Contains(f.Line(), d) {
					t.Errorf("finding %q lacks %q", f.Line(), d)
				}
			}
		})
	}
}
