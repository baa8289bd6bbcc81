package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
)

// HostFindings checks, without creating anything that outlives the
// check, what a lab with nodes pinned to these CPU lists ("" unpinned)
// needs of the host: root, the kernel modules (loading those it can),
// network namespaces, iptables with the matches and targets the data
// planes use, cgroups of the lab's own (the cgroup mode, and on v2
// whether systemd delegates them), and the CPUs. The kernel checks need
// root; without it only the root finding fails.
func HostFindings(ctx context.Context, cpuLists []string) []platform.Finding {
	root := platform.Finding{Check: "root", OK: os.Geteuid() == 0, Detail: "running as root"}
	if !root.OK {
		root.Detail = fmt.Sprintf("running as uid %d; the lab creates network namespaces, iptables rules and cgroups", os.Geteuid())
		root.Fix = "run meshbench as root (sudo)"
	}
	out := []platform.Finding{root}
	if root.OK {
		h := realHost()
		out = append(out, h.moduleFindings(ctx, iptablesBackend(ctx))...)
		out = append(out, kernelFindings(ctx)...)
		out = append(out, h.cgroupFindings(ctx)...)
	}
	return append(out, cpuFinding(cpuLists))
}

// probeRules exercise, in a throwaway namespace, every kind of rule the
// data planes install: the socket match and TPROXY (ambient), REDIRECT
// and the owner match (sidecars).
const probeRules = `*mangle
:MB-PREFLIGHT - [0:0]
-A PREROUTING -j MB-PREFLIGHT
-A MB-PREFLIGHT -p tcp -m socket -j ACCEPT
-A MB-PREFLIGHT -p tcp -j TPROXY --on-port 15001 --on-ip 127.0.0.1 --tproxy-mark 0x111/0xfff
COMMIT
*nat
-A OUTPUT -p tcp -m owner --uid-owner 1337 -j RETURN
-A OUTPUT -p tcp -j REDIRECT --to-ports 15001
COMMIT
`

// kernelFindings makes an unnamed network namespace on a thread of its
// own and loads probeRules into it; the namespace goes when the thread,
// which is never unlocked, exits with its goroutine.
func kernelFindings(ctx context.Context) []platform.Finding {
	netns := platform.Finding{Check: "netns", Detail: "network namespaces work", OK: true}
	ipt := platform.Finding{Check: "iptables", Detail: "iptables-restore loads the socket match, TPROXY, REDIRECT and the owner match"}
	type result struct {
		unshare error
		out     []byte
		err     error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- result{unshare: err}
			return
		}
		path, err := exec.LookPath("iptables-restore")
		if err != nil {
			done <- result{err: err}
			return
		}
		cmd := exec.CommandContext(ctx, path, "--noflush")
		cmd.Stdin = strings.NewReader(probeRules)
		out, err := cmd.CombinedOutput()
		done <- result{out: out, err: err}
	}()
	r := <-done
	switch {
	case r.unshare != nil:
		netns.OK, netns.Detail = false, "cannot create a network namespace: "+r.unshare.Error()
		netns.Fix = "run on a Linux host (or a privileged container) that allows network namespaces"
		ipt.Detail, ipt.Fix = "not checked: no network namespace", netns.Fix
	case r.err != nil && r.out == nil:
		ipt.Detail, ipt.Fix = "iptables-restore not found", "apt-get install iptables"
	case r.err != nil:
		ipt.Detail = "iptables-restore refused the data planes' rules: " + string(bytes.TrimSpace(r.out))
		ipt.Fix = "load the kernel's xt_socket, xt_TPROXY, xt_owner and REDIRECT support (modprobe xt_socket xt_TPROXY xt_owner), or use iptables 1.8 with nf_tables"
	default:
		ipt.OK = true
	}
	return []platform.Finding{netns, ipt}
}

// cgroupFindings report the host's cgroup mode and whether the lab can
// have cgroups of its own there ("cgroups"), and whether systemd is the
// init system and delegates ("systemd"). On v1 the lab's cgroups go
// below meshbench's own, in each controller's tree. On v2 under systemd
// they go in a transient scope with Delegate=yes, which the check tries:
// a probe scope around a sleep, stopped before it returns. On v2 without
// systemd they go below the root, which must pass the controllers on:
// the root is not meshbench's to change.
func (h host) cgroupFindings(ctx context.Context) []platform.Finding {
	cgf := platform.Finding{Check: "cgroups"}
	sys := platform.Finding{Check: "systemd", OK: true}
	booted := h.systemdBooted()
	if !booted {
		sys.Detail = fmt.Sprintf("systemd is not the init system (PID 1 is %s)", h.initName())
	}
	mode := h.cgroupMode()
	if mode != cgroupV2 {
		if booted {
			sys.Detail = "systemd is PID 1; on cgroup v1 the lab's cgroups go below meshbench's own in each controller's tree, which needs no delegation"
		}
		cg, err := h.detectCgroups("mbcheck")
		if err != nil {
			cgf.Detail, cgf.Fix = err.Error(), "mount the cgroup v1 controllers cpu, cpuacct, cpuset and memory, or boot with cgroup v2 unified (systemd.unified_cgroup_hierarchy=1)"
			return []platform.Finding{cgf, sys}
		}
		for _, top := range cg.hierarchies() {
			if _, err := os.Stat(filepath.Dir(top)); err != nil {
				cgf.Detail, cgf.Fix = fmt.Sprintf("own cgroup %s: %v", filepath.Dir(top), err), "mount the cgroup file systems under /sys/fs/cgroup"
				return []platform.Finding{cgf, sys}
			}
		}
		what := "legacy"
		if mode == cgroupHybrid {
			what = "hybrid: the v2 tree at " + filepath.Join(h.cgroupRoot, "unified") + " holds none of them"
		}
		cgf.OK = true
		cgf.Detail = fmt.Sprintf("cgroup v1 (%s): %s below meshbench's own cgroup", what, strings.Join(v1Controllers, ", "))
		return []platform.Finding{cgf, sys}
	}
	if missing, err := missingControllers(filepath.Join(h.cgroupRoot, "cgroup.controllers")); err != nil || len(missing) > 0 {
		cgf.Detail = fmt.Sprintf("cgroup v2 (unified): the kernel offers no %s controller on it", strings.Join(missing, ", "))
		if err != nil {
			cgf.Detail = err.Error()
		}
		cgf.Fix = "use a kernel built with CONFIG_CGROUP_SCHED, CONFIG_MEMCG and CONFIG_CPUSETS, and no v1 mount of those controllers (cgroup_no_v1=all)"
		return []platform.Finding{cgf, sys}
	}
	if !booted {
		ctl := filepath.Join(h.cgroupRoot, "cgroup.subtree_control")
		missing, err := missingControllers(ctl)
		if err != nil {
			cgf.Detail, cgf.Fix = err.Error(), "mount cgroup2 at "+h.cgroupRoot
			return []platform.Finding{cgf, sys}
		}
		if len(missing) > 0 {
			cgf.Detail = fmt.Sprintf("cgroup v2 (unified) without systemd: the lab's cgroups go below the root, which does not pass %s on to its children (%s)", strings.Join(missing, ", "), ctl)
			cgf.Fix = fmt.Sprintf("echo '%s' > %s (meshbench writes only to cgroups it creates), or run under systemd, which delegates a scope to the lab", controlList("+", missing), ctl)
			return []platform.Finding{cgf, sys}
		}
		cgf.OK = true
		cgf.Detail = fmt.Sprintf("cgroup v2 (unified) without systemd: the lab's cgroups go below the root (%s), which passes on %s", filepath.Join(h.cgroupRoot, labCgroupName("<prefix>")), strings.Join(v2Controllers, ", "))
		return []platform.Finding{cgf, sys}
	}
	cgf.OK = true
	cgf.Detail = fmt.Sprintf("cgroup v2 (unified): the lab's cgroups go in a systemd scope of its own with Delegate=yes, %s/%s", scopeSlice, scopeUnit("<prefix>"))
	sys = h.delegationFinding(ctx)
	return []platform.Finding{cgf, sys}
}

// probeSeq tells apart the probe scopes of one process.
var probeSeq atomic.Int64

// delegationFinding tries what the lab does on cgroup v2 under systemd: a
// transient scope with Delegate=yes around a process, whose cgroup must
// offer the lab's controllers. The scope is stopped before it returns.
func (h host) delegationFinding(ctx context.Context) platform.Finding {
	f := platform.Finding{Check: "systemd"}
	sd, err := h.dial(ctx)
	if err != nil {
		f.Detail = "systemd is PID 1 but does not answer: " + err.Error()
		f.Fix = "start D-Bus (systemctl start dbus), or run meshbench as root, which reaches systemd through /run/systemd/private"
		return f
	}
	defer sd.Close()
	version, err := sd.Version(ctx)
	if err != nil {
		version = "(version unknown)"
	}
	unit := fmt.Sprintf("meshbench-probe-%d-%d.scope", os.Getpid(), probeSeq.Add(1))
	hold := exec.Command("sleep", "60")
	if err := startIn("", hold); err != nil {
		f.Detail, f.Fix = fmt.Sprintf("start a probe process: %v", err), "install coreutils (sleep)"
		return f
	}
	go func() { _ = hold.Wait() }()
	defer func() { _ = hold.Process.Kill() }()
	rel, err := sd.StartScope(ctx, unit, scopeSlice, "meshbench doctor: cgroup delegation probe", hold.Process.Pid)
	if err != nil {
		f.Detail = fmt.Sprintf("systemd %s is PID 1 but refused a transient scope with Delegate=yes: %v", version, err)
		f.Fix = "use systemd 244 or later, which delegates cpu, cpuset and memory to a scope; or boot with cgroup v1 (systemd.unified_cgroup_hierarchy=0)"
		return f
	}
	missing, err := missingControllers(filepath.Join(h.cgroupRoot, rel, "cgroup.controllers"))
	if serr := sd.StopUnit(ctx, unit); serr != nil && err == nil {
		err = fmt.Errorf("%w; stop it with systemctl stop %s", serr, unit)
	}
	switch {
	case err != nil:
		f.Detail, f.Fix = fmt.Sprintf("systemd %s: the probe scope %s: %v", version, unit, err), "check systemctl status "+unit
	case len(missing) > 0:
		f.Detail = fmt.Sprintf("systemd %s is PID 1 but a scope with Delegate=yes gets no %s controller", version, strings.Join(missing, ", "))
		f.Fix = "use systemd 244 or later (older ones do not delegate cpuset)"
	default:
		f.OK = true
		f.Detail = fmt.Sprintf("systemd %s is PID 1 and delegates %s to a transient scope (tried with %s, stopped)", version, strings.Join(v2Controllers, ", "), unit)
	}
	return f
}

// cpuFinding checks that every CPU the nodes pin is one this process may
// run on.
func cpuFinding(lists []string) platform.Finding {
	f := platform.Finding{Check: "cpus"}
	have, err := allowedCPUs()
	if err != nil {
		f.Detail, f.Fix = err.Error(), "run on Linux"
		return f
	}
	var missing []string
	for _, l := range lists {
		if l == "" {
			continue
		}
		cpus, err := infra.ParseCPUList(l)
		if err != nil {
			f.Detail, f.Fix = err.Error(), "fix platform.nodes[].cpus in the study"
			return f
		}
		for _, c := range cpus {
			if !slices.Contains(have, c) {
				missing = append(missing, fmt.Sprint(c))
			}
		}
	}
	if len(missing) > 0 {
		f.Detail = fmt.Sprintf("the nodes pin CPUs %s, this process may use only %s", strings.Join(missing, ","), formatCPUs(have))
		f.Fix = "change platform.nodes[].cpus in the study to CPUs this host has, or run on a larger host"
		return f
	}
	f.OK, f.Detail = true, fmt.Sprintf("%d CPUs (%s) for nodes pinned to %s", len(have), formatCPUs(have), strings.Join(nonEmpty(lists), " "))
	return f
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// allowedCPUs are the CPUs this process may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// formatCPUs writes CPU numbers as a list such as "0-1,4".
func formatCPUs(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
