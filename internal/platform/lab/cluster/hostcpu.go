package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
)

// userHZ is the unit of /proc/stat's CPU times. The kernel fixes it at 100
// for user space on every architecture Linux runs on.
const userHZ = 100

// HostCPU is what the lab's CPUs did during a window besides running the
// lab: the host noise that can move a measurement without the lab seeing
// it in any container's usage.
type HostCPU struct {
	// CPUs is how many CPUs the lab's nodes may run on.
	CPUs int
	// Outside is the CPU, in cores, used on those CPUs by anything outside
	// the lab's cgroups (other processes, the kernel's own threads, the
	// runner itself excluded); Steal is the time the hypervisor gave to
	// other guests, in cores.
	Outside, Steal float64
	// Softirq is the kernel's softirq time on those CPUs, in cores, which
	// is charged to the lab rather than to Outside: see account.
	Softirq float64
	// Slowdown is how much slower the slowest of those CPUs ran a fixed
	// piece of work at both the window's start and its end (the lesser of
	// the two) than its fastest time this run (0.3 is 30% slower): what
	// no counter shows (see slowdown).
	Slowdown float64
	// Nodes holds each node's CPUs and everything that ran on them.
	Nodes []NodeCPU
}

// NodeCPU is one node's CPUs over a window: Busy is everything that ran on
// them, lab or not, and Outside the part of it outside the lab, both in
// cores; Steal is the hypervisor's steal time on them.
type NodeCPU struct {
	Name                 string
	Role                 string
	CPUs                 int
	Busy, Outside, Steal float64
}

// Noise is the host noise in cores: CPU used on the lab's CPUs by anything
// else, steal included.
func (h HostCPU) Noise() float64 { return h.Outside + h.Steal }

// cpuTimes is one CPU's cumulative time in nanoseconds: busy (user, nice,
// system, irq, softirq), the softirq part of it, and stolen.
type cpuTimes struct{ busy, softirq, steal uint64 }

// cpuSnapshot is every counter the noise accounting reads, at one time.
type cpuSnapshot struct {
	t time.Time
	// host is /proc/stat's per-CPU times.
	host map[int]cpuTimes
	// lab is the lab's cgroup CPU usage per CPU (cpuacct.usage_percpu on
	// cgroup v1), or nil where only the total is known (v2).
	lab      map[int]uint64
	labTotal uint64
	// nodes is each node's cgroup CPU usage where lab is nil (v2): what
	// tells apart, per node, the lab's time from the rest on CPUs only
	// that node may use.
	nodes map[string]uint64
	// self is this process's own CPU time: the runner is part of the
	// study, not noise.
	self uint64
}

// HostMeter measures host noise over a window: StartHostMeter reads the
// counters, Stop reads them again and does the accounting.
type HostMeter struct {
	l        *Lab
	before   cpuSnapshot
	cpus     []int
	slowdown float64
	err      error
}

// StartHostMeter starts measuring host noise on the lab's CPUs.
func (l *Lab) StartHostMeter() *HostMeter {
	m := &HostMeter{l: l}
	if m.cpus, m.err = l.labCPUs(); m.err != nil {
		return m
	}
	if m.slowdown, m.err = l.slowdown(m.cpus); m.err != nil {
		return m
	}
	m.before, m.err = l.cpuSnapshot()
	return m
}

// Stop ends the window and returns what the lab's CPUs did besides the
// lab; an error means the counters could not be read, and the noise is
// unknown.
func (m *HostMeter) Stop() (HostCPU, error) {
	if m.err != nil {
		return HostCPU{}, m.err
	}
	after, err := m.l.cpuSnapshot()
	if err != nil {
		return HostCPU{}, err
	}
	slow, err := m.l.slowdown(m.cpus)
	if err != nil {
		return HostCPU{}, err
	}
	var nodes []nodeCPUs
	for _, n := range m.l.nodes {
		cpus := m.cpus
		if n.CPUs != "" {
			if cpus, err = infra.ParseCPUList(n.CPUs); err != nil {
				return HostCPU{}, err
			}
		}
		nodes = append(nodes, nodeCPUs{name: n.Name, role: n.Role, cpus: cpus})
	}
	h := account(m.before, after, m.cpus, nodes)
	// Slow at both ends of the window, or it is not the host's: right
	// before and after a measurement the lab itself is busy for a moment
	// (counters read, generators exiting), and a busy hyperthread sibling
	// slows a probe by a third, which read as slowdowns of 33-36% with no
	// host noise at all.
	h.Slowdown = min(m.slowdown, slow)
	return h, nil
}

// nodeCPUs is a node and the CPUs it may run on.
type nodeCPUs struct {
	name, role string
	cpus       []int
}

// account computes host noise between two snapshots. Per CPU, the time
// outside the lab is the CPU's busy time less the lab's cgroups' time on
// it and less its softirq time; where the lab's time is known only in
// total (v2), it comes off the sum, and a node's own cgroup total off the
// time of CPUs no other node may use. The runner's own time comes off the total
// too. Tick-based /proc/stat times are exact only to a tick or so, so
// small negatives are clamped.
//
// Softirq time is charged to the lab because on the lab's CPUs it is
// mostly the kernel carrying the lab's own packets (veth, bridge, NAT,
// loopback): work the lab causes but no cgroup is charged for when it runs
// in the idle task or in ksoftirqd, and it grows with the rate, so
// counting it as outside noise marked the lab's own high-rate trials
// noisy. An outside process's
// own user and system time is still counted, so a hog is still seen; what
// the rule cannot see is another process's network work done in softirq
// on the lab's CPUs, and where softirq runs inside a lab task it comes off
// twice, so the guard errs by at most the softirq time towards quiet.
func account(before, after cpuSnapshot, labCPUs []int, nodes []nodeCPUs) HostCPU {
	secs := after.t.Sub(before.t).Seconds()
	h := HostCPU{CPUs: len(labCPUs)}
	if secs <= 0 {
		return h
	}
	outside := map[int]float64{}
	busy := map[int]float64{}
	steal := map[int]float64{}
	var sumBusy, sumOutside float64
	for _, c := range labCPUs {
		b := float64(sub(after.host[c].busy, before.host[c].busy))
		busy[c] = b
		si := float64(sub(after.host[c].softirq, before.host[c].softirq))
		h.Softirq += si
		steal[c] = float64(sub(after.host[c].steal, before.host[c].steal))
		sumBusy += b
		if before.lab != nil && after.lab != nil {
			outside[c] = max(0, b-si-float64(sub(after.lab[c], before.lab[c])))
			sumOutside += outside[c]
		}
		h.Steal += steal[c]
	}
	if before.lab == nil || after.lab == nil {
		sumOutside = max(0, sumBusy-h.Softirq-float64(sub(after.labTotal, before.labTotal)))
	}
	self := float64(sub(after.self, before.self))
	h.Outside = max(0, sumOutside-self) / 1e9 / secs
	h.Steal /= 1e9 * secs
	h.Softirq /= 1e9 * secs
	for _, n := range nodes {
		nc := NodeCPU{Name: n.name, Role: n.role, CPUs: len(n.cpus)}
		var si float64
		for _, c := range n.cpus {
			nc.Busy += busy[c]
			nc.Outside += outside[c]
			nc.Steal += steal[c]
			si += float64(sub(after.host[c].softirq, before.host[c].softirq))
		}
		if own, ok := after.nodes[n.name]; ok && before.lab == nil && !sharesCPUs(n, nodes) {
			nc.Outside = max(0, nc.Busy-si-float64(sub(own, before.nodes[n.name])))
		}
		nc.Busy /= 1e9 * secs
		nc.Outside /= 1e9 * secs
		nc.Steal /= 1e9 * secs
		h.Nodes = append(h.Nodes, nc)
	}
	return h
}

// sharesCPUs says whether another node may run on any of n's CPUs.
func sharesCPUs(n nodeCPUs, nodes []nodeCPUs) bool {
	for _, o := range nodes {
		if o.name != n.name && slices.ContainsFunc(o.cpus, func(c int) bool { return slices.Contains(n.cpus, c) }) {
			return true
		}
	}
	return false
}

// sub is a counter's increase; a counter that went back (a CPU taken
// offline and back) counts as no increase.
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func (l *Lab) cpuSnapshot() (cpuSnapshot, error) {
	s := cpuSnapshot{t: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, fmt.Errorf("host noise: %w", err)
	}
	if s.host, err = parseProcStat(b); err != nil {
		return s, fmt.Errorf("host noise: %w", err)
	}
	if s.self, err = selfCPU(); err != nil {
		return s, fmt.Errorf("host noise: %w", err)
	}
	if l.cg.V2 {
		kv, err := readKV(filepath.Join(l.cg.Dirs[""], "cpu.stat"))
		if err != nil {
			return s, fmt.Errorf("host noise: %w", err)
		}
		s.labTotal = kv["usage_usec"] * 1000
		s.nodes = map[string]uint64{}
		for _, n := range l.nodes {
			kv, err := readKV(filepath.Join(l.cg.Dirs[""], nodeCgroup(n.Name), "cpu.stat"))
			if err != nil {
				return s, fmt.Errorf("host noise: %w", err)
			}
			s.nodes[n.Name] = kv["usage_usec"] * 1000
		}
		return s, nil
	}
	pc, err := os.ReadFile(filepath.Join(l.cg.Dirs["cpuacct"], "cpuacct.usage_percpu"))
	if err != nil {
		return s, fmt.Errorf("host noise: %w", err)
	}
	if s.lab, err = parsePerCPU(pc); err != nil {
		return s, fmt.Errorf("host noise: cpuacct.usage_percpu: %w", err)
	}
	for _, v := range s.lab {
		s.labTotal += v
	}
	return s, nil
}

// labCPUs is every CPU a lab node may run on: the pinned nodes' CPUs and,
// when a node floats, every CPU of the lab's cpuset.
func (l *Lab) labCPUs() ([]int, error) {
	var out []int
	floating := false
	for _, n := range l.nodes {
		if n.CPUs == "" {
			floating = true
			continue
		}
		cpus, err := infra.ParseCPUList(n.CPUs)
		if err != nil {
			return nil, err
		}
		out = append(out, cpus...)
	}
	if floating {
		file := filepath.Join(l.cg.Dirs["cpuset"], "cpuset.cpus")
		if l.cg.V2 {
			file = filepath.Join(l.cg.Dirs[""], "cpuset.cpus.effective")
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("host noise: the lab's CPUs: %w", err)
		}
		cpus, err := infra.ParseCPUList(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("host noise: %s: %w", file, err)
		}
		out = append(out, cpus...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseProcStat reads the per-CPU lines of /proc/stat: "cpuN user nice
// system idle iowait irq softirq steal ...", in USER_HZ ticks.
func parseProcStat(b []byte) (map[int]cpuTimes, error) {
	out := map[int]cpuTimes{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			return nil, fmt.Errorf("/proc/stat: %q", f[0])
		}
		var v [8]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/stat: %s: %w", f[0], err)
			}
		}
		const tick = 1e9 / userHZ
		// user nice system idle iowait irq softirq steal
		out[n] = cpuTimes{busy: (v[0] + v[1] + v[2] + v[5] + v[6]) * tick, softirq: v[6] * tick, steal: v[7] * tick}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat has no per-CPU lines")
	}
	return out, nil
}

// parsePerCPU reads cpuacct.usage_percpu: nanoseconds per CPU, in CPU order.
func parsePerCPU(b []byte) (map[int]uint64, error) {
	out := map[int]uint64{}
	for i, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// selfCPU is this process's user and system time in nanoseconds, from
// /proc/self/stat (fields 14 and 15, after the command name in brackets).
func selfCPU() (uint64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/self/stat: %d fields", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/self/stat: bad utime or stime")
	}
	return (ut + st) * (1e9 / userHZ), nil
}
