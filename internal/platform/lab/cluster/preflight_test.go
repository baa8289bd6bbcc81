package cluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/testenv"
)

// lab up on a host that cannot run the lab is refused by the preflight,
// with the cause and its fix, before any state exists: no state
// directory, no cgroup, no unit left running, no network namespace. The
// hosts are fakes (a cgroup tree, systemd, modprobe); the real proof of
// the hosts that can is the VM test.
func TestPreflightRefusesHost(t *testing.T) {
	testenv.NeedRoot(t) // the preflight checks root first
	tests := []struct {
		name string
		spec hostSpec
		want []string // in the error: the finding and its fix
	}{
		{
			name: "v2 without systemd, the root passes no controllers",
			spec: hostSpec{v2: true, rootCtl: "io pids\n", modules: everyModule()},
			want: []string{"cgroups: cgroup v2 (unified) without systemd", "does not pass cpu, memory, cpuset on",
				"fix: echo '+cpu +memory +cpuset' > "},
		},
		{
			name: "v2 without systemd, the root passes cpu only",
			spec: hostSpec{v2: true, rootCtl: "cpu\n", modules: everyModule()},
			want: []string{"does not pass memory, cpuset on", "fix: echo '+memory +cpuset' > "},
		},
		{
			name: "systemd delegates no cpu or cpuset to a scope",
			spec: hostSpec{v2: true, systemd: true, sd: &fakeSystemd{controllers: "memory pids"}, modules: everyModule()},
			want: []string{"systemd: systemd 252.fake is PID 1 but a scope with Delegate=yes gets no cpu, cpuset controller",
				"fix: use systemd 244 or later"},
		},
		{
			name: "systemd refuses a delegating scope",
			spec: hostSpec{v2: true, systemd: true, sd: &fakeSystemd{refuse: errors.New("Unknown assignment: Delegate")}, modules: everyModule()},
			want: []string{"refused a transient scope with Delegate=yes: Unknown assignment: Delegate", "fix: use systemd 244 or later"},
		},
		{
			name: "systemd does not answer",
			spec: hostSpec{v2: true, systemd: true, dialErr: errors.New("connect to systemd over D-Bus: no such file"), modules: everyModule()},
			want: []string{"systemd: systemd is PID 1 but does not answer", "fix: start D-Bus"},
		},
		{
			name: "a module the kernel lacks",
			spec: hostSpec{modules: slices.DeleteFunc(everyModule(), func(m string) bool { return m == "xt_TPROXY" || m == "xt_socket" }),
				modprobe: &fakeModprobe{have: []string{"xt_socket"}, err: errors.New("exit status 1")}},
			want: []string{"module xt_TPROXY: kernel 6.1.0-fake has no module xt_TPROXY: modprobe: FATAL: Module xt_TPROXY not found",
				"fix: install the kernel's extra modules (Ubuntu: apt-get install linux-modules-extra-6.1.0-fake), or use a kernel built with CONFIG_NETFILTER_XT_TARGET_TPROXY"},
		},
		{
			name: "no modprobe",
			spec: hostSpec{modules: everyModule()[1:], modprobe: &fakeModprobe{err: errNoModprobe}},
			want: []string{"module nf_tables: nf_tables is not loaded, and modprobe is not installed", "fix: apt-get install kmod"},
		},
		{
			name: "the running kernel's modules are not installed",
			spec: hostSpec{modules: everyModule()[:3], noModuleDir: true, modprobe: &fakeModprobe{err: errors.New("exit status 1")}},
			want: []string{"module veth: veth is not loaded, and the running kernel's modules are not installed",
				"fix: install them (Debian: apt-get install linux-image-6.1.0-fake"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, tt.spec)
			state := filepath.Join(t.TempDir(), "state")
			before := treeFiles(t, h.cgroupRoot)
			l, err := Up(context.Background(), Config{Name: "mbpf", Prefix: "mbpf", StateDir: state,
				Nodes: []NodeConfig{{Name: "a", Role: "app"}}, Logger: slog.New(slog.DiscardHandler), host: &h})
			if err == nil {
				_ = l.Down(context.Background())
				t.Fatal("lab up was not refused")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "preflight failed") {
				t.Errorf("not refused by the preflight: %v", err)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("state directory made: %v", err)
			}
			after := treeFiles(t, h.cgroupRoot)
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s made", p)
				}
			}
			if sd := tt.spec.sd; sd != nil && len(sd.running()) > 0 {
				t.Errorf("units left running: %v", sd.running())
			}
			if ns, _ := listNetns("mbpf"); len(ns) > 0 {
				t.Errorf("network namespaces made: %v", ns)
			}
		})
	}
}

// The doctor's lines for hosts that can run the lab: the mode, systemd,
// and what the module check loaded.
func TestHostFindingsFakes(t *testing.T) {
	tests := []struct {
		name   string
		spec   hostSpec
		want   []string
		loaded []string // modprobe calls
	}{
		{
			name: "v2 under systemd, modules loaded on demand",
			spec: hostSpec{v2: true, systemd: true, sd: &fakeSystemd{controllers: "cpuset cpu io memory pids"},
				modules: []string{"nf_tables", "veth"}, builtin: []string{"bridge"}, modprobe: &fakeModprobe{have: everyModule()}},
			want: []string{"modules: kernel 6.1.0-fake, iptables nf_tables: 3 modules present, loaded now with modprobe: nft_compat, nft_chain_nat, nf_conntrack",
				"cgroups: cgroup v2 (unified): the lab's cgroups go in a systemd scope of its own with Delegate=yes, system.slice/meshbench-<prefix>.scope",
				"systemd: systemd 252.fake is PID 1 and delegates cpu, memory, cpuset to a transient scope"},
			loaded: slices.DeleteFunc(everyModule(), func(m string) bool { return m == "nf_tables" || m == "veth" || m == "bridge" }),
		},
		{
			name: "v2 without systemd",
			spec: hostSpec{v2: true, rootCtl: "cpuset cpu memory", modules: everyModule()},
			want: []string{"cgroups: cgroup v2 (unified) without systemd: the lab's cgroups go below the root",
				"systemd: systemd is not the init system (PID 1 is busybox)", "modules: kernel 6.1.0-fake, iptables nf_tables: 16 modules present"},
		},
		{
			name: "a kernel without modules",
			spec: hostSpec{noModules: true},
			want: []string{"modules: kernel 6.1.0-fake loads no modules"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, tt.spec)
			fs := append(h.moduleFindings(context.Background(), "nf_tables"), h.cgroupFindings(context.Background())...)
			var lines []string
			for _, f := range fs {
				if !f.OK && f.Check != "cgroups" { // v1 on a fake tree reads this host's own cgroups
					t.Errorf("failed: %s", f.Line())
				}
				lines = append(lines, f.Line())
			}
			all := strings.Join(lines, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("findings do not say %q:\n%s", w, all)
				}
			}
			if tt.spec.modprobe != nil && !slices.Equal(tt.spec.modprobe.ran, tt.loaded) {
				t.Errorf("modprobe ran for %v, want %v", tt.spec.modprobe.ran, tt.loaded)
			}
			if sd := tt.spec.sd; sd != nil && (len(sd.running()) > 0 || len(sd.started) != 1) {
				t.Errorf("probe scopes started %v, running %v; want one, stopped", sd.started, sd.running())
			}
		})
	}
}
