package cluster

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/meshbench/meshbench/internal/testenv"
)

// lab down --name takes a name, not a path: "..", "." and anything with a
// separator are refused before the state root is joined with them, so
// that a dry run lists nothing and a removal removes nothing (the audit's
// `lab down --name .. --prefix zzq --dry-run` listed /run).
func TestTeardownRefusesNamesThatArePaths(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"..", ".", "../x", "../../tmp/x", "a/b", "/", "/run", "Mb", "x.y"} {
		r, err := Inventory(context.Background(), TeardownOptions{Name: name, Prefix: "zzq"})
		if err == nil || !strings.Contains(err.Error(), "lab name "+strconv.Quote(name)) {
			t.Errorf("inventory of lab %q: %v; want the name refused", name, err)
		}
		if len(r.Lines()) != 0 {
			t.Errorf("inventory of lab %q lists %v", name, r.Lines())
		}
	}
	for _, prefix := range []string{"..", ".", "/", "a/b", "../x"} {
		r, err := Inventory(context.Background(), TeardownOptions{Prefix: prefix})
		if err == nil || !strings.Contains(err.Error(), "lab prefix "+strconv.Quote(prefix)) {
			t.Errorf("inventory of prefix %q: %v; want the prefix refused", prefix, err)
		}
		if len(r.Lines()) != 0 {
			t.Errorf("inventory of prefix %q lists %v", prefix, r.Lines())
		}
	}
}

// A state file is input too: its name, prefix and cgroup directories are
// checked when it is read, and a state whose cgroup directories are not
// the lab's own (<cgroup mount>/.../<prefix>-lab) is refused, so that lab
// down never kills the processes of, or removes, a cgroup it did not make.
func TestReadStateRefusesForeignCgroups(t *testing.T) {
	t.Parallel()
	own, err := realHost().detectCgroups("zzq")
	if err != nil {
		t.Fatal(err)
	}
	// The cgroup this test runs in: it has processes, this one among them.
	busy := map[string]string{}
	for c, d := range own.Dirs {
		busy[c] = filepath.Dir(d)
	}
	anyDir := func(m map[string]string) (string, string) {
		for c, d := range m {
			return c, d
		}
		return "", ""
	}
	c, d := anyDir(own.Dirs)
	tests := []struct {
		name string
		st   State
		want string
	}{
		{"a cgroup with processes", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: busy}}, "not the lab's own cgroup"},
		{"a directory outside the cgroup mounts", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: map[string]string{c: "/etc/zzq-lab"}}}, "not the lab's own cgroup"},
		{"a path that climbs out", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: map[string]string{c: d + "/../../../../etc/zzq-lab"}}}, "not the lab's own cgroup"},
		{"another prefix's directory", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: map[string]string{c: filepath.Join(filepath.Dir(d), "mb-lab")}}}, "not the lab's own cgroup"},
		{"an unknown controller", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: map[string]string{"freezer": d}}}, "controller"},
		{"a name that is a path", State{Name: "../x", Prefix: "zzq", Cgroups: own}, "lab name"},
		{"an empty name", State{Name: "", Prefix: "zzq", Cgroups: own}, "lab name"},
		{"a prefix that is a path", State{Name: "zzq", Prefix: "..", Cgroups: own}, "lab prefix"},
		{"an empty prefix", State{Name: "zzq", Prefix: "", Cgroups: own}, "lab prefix"},
		{"a bad prefix", State{Name: "zzq", Prefix: "zz-q", Cgroups: own}, "lab prefix"},
		{"a runtime's prefix", State{Name: "zzq", Prefix: "cni", Cgroups: own}, "lab prefix"},
		{"another systemd unit", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: own.Dirs, Unit: "ssh.service"}}, "not the lab's own (meshbench-zzq.scope)"},
		{"another unit's cgroup as the scope", State{Name: "zzq", Prefix: "zzq", Cgroups: cgroups{V2: own.V2, Dirs: own.Dirs, Scope: filepath.Dir(d)}}, "is not the lab's own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			b, err := json.Marshal(tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := readState(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("read state: %v; want it refused saying %q", err, tt.want)
			}
			r, err := Inventory(context.Background(), TeardownOptions{StateDir: dir})
			if err == nil || len(r.Processes)+len(r.Cgroups) > 0 {
				t.Errorf("inventory from that state: %v, %v; want it refused", r.Lines(), err)
			}
		})
	}
	// The lab's own directories pass.
	dir := t.TempDir()
	b, _ := json.Marshal(State{Name: "zzq", Prefix: "zzq", Cgroups: own})
	if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readState(dir); err != nil {
		t.Errorf("the lab's own cgroups refused: %v", err)
	}
}

// Prefixes that container runtimes use for their own network namespaces
// under /run/netns are refused, where a lab is brought up and where one
// is taken down: `lab down --prefix cni` would otherwise name containerd's
// cni-* namespaces.
func TestRuntimePrefixesRefused(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"cni", "netns", "cilium"} {
		if _, err := (Config{Prefix: p, Nodes: []NodeConfig{{Name: "a", Role: "app"}}}).withDefaults(); err == nil || !strings.Contains(err.Error(), "container runtime") {
			t.Errorf("lab up with prefix %s: %v", p, err)
		}
		r, err := Inventory(context.Background(), TeardownOptions{Name: "zzq", Prefix: p, StateDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "container runtime") || len(r.Lines()) > 0 {
			t.Errorf("lab down --prefix %s: %v, %v", p, r.Lines(), err)
		}
	}
}

// A namespace under /run/netns whose name merely starts with the lab's
// prefix (another tool's, a runtime's) is not the lab's: lab down --prefix
// neither lists nor removes it. The lab marks the namespaces it creates.
func TestIntegrationTeardownLeavesUnmarkedNamespaces(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	prefix := testPrefix(t)
	foreign := prefix + "-p-other_pod"
	if err := onOwnThread(foreign, func() error {
		ns, err := netns.NewNamed(foreign) // as `ip netns add` makes it: no mark
		if err != nil {
			return err
		}
		return ns.Close()
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteNetns(foreign) })
	ctx := context.Background()
	r, err := Inventory(ctx, TeardownOptions{Prefix: prefix, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.Namespaces, foreign) {
		t.Errorf("lab down --prefix %s --dry-run lists %s, which the lab did not create", prefix, foreign)
	}
	if err := Teardown(ctx, TeardownOptions{Prefix: prefix, StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, foreign)); err != nil {
		t.Errorf("lab down --prefix %s removed %s, which the lab did not create: %v", prefix, foreign, err)
	}
	// The lab's own namespaces are still found by their mark.
	own := prefix + "-cloud"
	if err := createNetns(own); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteNetns(own) })
	if names, err := listNetns(prefix); err != nil || !slices.Equal(names, []string{own}) {
		t.Errorf("the lab's namespaces: %v, %v; want only %s", names, err, own)
	}
}
