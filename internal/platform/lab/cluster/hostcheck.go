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

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
)

// HostFindings checks, without creating anything that outlives the
// check, what a lab with nodes pinned to these CPU lists ("" unpinned)
// needs of the host: root, network namespaces, iptables with the matches
// and targets the data planes use, the cgroup controllers, and the CPUs.
// The kernel checks need root; without it only the root finding fails.
func HostFindings(ctx context.Context, cpuLists []string) []platform.Finding {
	root := platform.Finding{Check: "root", OK: os.Geteuid() == 0, Detail: "running as root"}
	if !root.OK {
		root.Detail = fmt.Sprintf("running as uid %d; the lab creates network namespaces, iptables rules and cgroups", os.Geteuid())
		root.Fix = "run meshbench as root (sudo)"
	}
	out := []platform.Finding{root}
	if root.OK {
		out = append(out, kernelFindings(ctx)...)
		out = append(out, cgroupFinding())
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

// cgroupFinding checks that the controllers the lab uses are there for
// this process.
func cgroupFinding() platform.Finding {
	f := platform.Finding{Check: "cgroups"}
	cg, err := detectCgroups("mbcheck")
	if err != nil {
		f.Detail, f.Fix = err.Error(), "mount the cgroup v1 controllers cpu, cpuacct, cpuset and memory (a hybrid or legacy hierarchy; the lab does not run on cgroup v2 alone)"
		return f
	}
	for _, top := range cg.hierarchies() {
		if _, err := os.Stat(filepath.Dir(top)); err != nil {
			f.Detail, f.Fix = fmt.Sprintf("own cgroup %s: %v", filepath.Dir(top), err), "mount the cgroup file systems under /sys/fs/cgroup"
			return f
		}
	}
	f.OK = true
	if cg.V2 {
		f.Detail = "cgroup v2"
	} else {
		f.Detail = "cgroup v1: " + strings.Join(v1Controllers, ", ")
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
