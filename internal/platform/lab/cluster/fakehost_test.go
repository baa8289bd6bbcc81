package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A fake host: a cgroup tree of plain files, systemd's and the kernel's
// files, a fake systemd and a fake modprobe. Plain files stand in for the
// kernel's: a write replaces a file, so tests read what was written.

// fakeSystemd creates a scope's cgroup in the fake tree, as systemd does,
// with the controllers it would delegate, and on stop kills the processes
// listed below it and removes it.
type fakeSystemd struct {
	root        string // the fake cgroup root
	controllers string // a delegated scope's cgroup.controllers
	refuse      error  // StartScope's answer, when set
	slice       string // where scopes go; default the slice asked for

	mu      sync.Mutex
	units   map[string]string // running unit -> cgroup
	started []string
	stopped []string
}

func (f *fakeSystemd) Version(context.Context) (string, error) { return "252.fake", nil }
func (f *fakeSystemd) Close()                                  {}

func (f *fakeSystemd) StartScope(_ context.Context, unit, slice, _ string, pid int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return "", f.refuse
	}
	if _, ok := f.units[unit]; ok {
		return "", fmt.Errorf("%w: systemd unit %s exists", ErrAlreadyUp, unit)
	}
	if f.slice != "" {
		slice = f.slice
	}
	rel := "/" + slice + "/" + unit
	dir := filepath.Join(f.root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, s := range map[string]string{"cgroup.procs": fmt.Sprint(pid), "cgroup.controllers": f.controllers, "cgroup.subtree_control": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			return "", err
		}
	}
	if f.units == nil {
		f.units = map[string]string{}
	}
	f.units[unit] = rel
	f.started = append(f.started, unit)
	return rel, nil
}

func (f *fakeSystemd) ScopeCgroup(_ context.Context, unit string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.units[unit], nil
}

func (f *fakeSystemd) StopUnit(_ context.Context, unit string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	rel, ok := f.units[unit]
	if !ok {
		return nil
	}
	dir := filepath.Join(f.root, rel)
	for _, pid := range pidsBelow(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	delete(f.units, unit)
	f.stopped = append(f.stopped, unit)
	return os.RemoveAll(dir)
}

func (f *fakeSystemd) running() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for u := range f.units {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// fakeModprobe loads the modules it has, recording each call.
type fakeModprobe struct {
	have []string
	err  error // what modprobe fails with for the others
	mu   sync.Mutex
	ran  []string
}

func (m *fakeModprobe) load(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ran = append(m.ran, name)
	if slices.Contains(m.have, name) {
		return nil, nil
	}
	if errors.Is(m.err, errNoModprobe) {
		return nil, m.err
	}
	return []byte("modprobe: FATAL: Module " + name + " not found in directory /lib/modules/6.1.0-fake"), m.err
}

// hostSpec says what the fake host has.
type hostSpec struct {
	v2      bool   // unified; else hybrid, as this project's hosts
	systemd bool   // systemd is PID 1
	rootCtl string // the root's cgroup.subtree_control (v2)
	sd      *fakeSystemd
	dialErr error
	// modules are loaded (/proc/modules); builtin are in modules.builtin;
	// noModules means a kernel without loadable modules.
	modules, builtin []string
	noModules        bool
	noModuleDir      bool
	modprobe         *fakeModprobe
}

// everyModule is every module the lab asks for with iptables-nft.
func everyModule() []string {
	var out []string
	for _, m := range append(slices.Clone(nftModules), labModules...) {
		out = append(out, m.name)
	}
	return out
}

func newFakeHost(t *testing.T, s hostSpec) host {
	t.Helper()
	base := t.TempDir()
	h := host{
		cgroupRoot:  filepath.Join(base, "sys/fs/cgroup"),
		systemdDir:  filepath.Join(base, "run/systemd/system"),
		pid1Comm:    filepath.Join(base, "proc/1/comm"),
		release:     "6.1.0-fake",
		procModules: filepath.Join(base, "proc/modules"),
		moduleDir:   filepath.Join(base, "lib/modules/6.1.0-fake"),
		// AppArmor: off.
		apparmorEnabled: filepath.Join(base, "sys/module/apparmor/parameters/enabled"),
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s.v2 {
		write(filepath.Join(h.cgroupRoot, "cgroup.controllers"), "cpuset cpu io memory hugetlb pids rdma misc\n")
		write(filepath.Join(h.cgroupRoot, "cgroup.subtree_control"), s.rootCtl)
		write(filepath.Join(h.cgroupRoot, scopeSlice, "cgroup.subtree_control"), "cpu memory pids\n")
	} else {
		write(filepath.Join(h.cgroupRoot, "unified", "cgroup.controllers"), "")
	}
	if s.systemd {
		if err := os.MkdirAll(h.systemdDir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(h.pid1Comm, "systemd\n")
	} else {
		write(h.pid1Comm, "busybox\n")
	}
	if s.sd != nil {
		s.sd.root = h.cgroupRoot
	}
	h.dial = func(context.Context) (systemd, error) {
		if s.dialErr != nil {
			return nil, s.dialErr
		}
		if s.sd == nil {
			t.Error("the test's host has no systemd to dial")
			return nil, errors.New("no systemd")
		}
		return s.sd, nil
	}
	if !s.noModules {
		var lines []string
		for _, m := range s.modules {
			lines = append(lines, m+" 16384 0 - Live 0x0000000000000000")
		}
		write(h.procModules, strings.Join(lines, "\n")+"\n")
	}
	if !s.noModuleDir {
		var lines []string
		for _, m := range s.builtin {
			lines = append(lines, "kernel/net/"+m+".ko")
		}
		write(filepath.Join(h.moduleDir, "modules.builtin"), strings.Join(lines, "\n")+"\n")
	}
	mp := s.modprobe
	if mp == nil {
		mp = &fakeModprobe{}
	}
	h.modprobe = mp.load
	return h
}

// treeFiles lists every file below dir with its contents, to show what a
// step changed.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
