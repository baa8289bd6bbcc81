package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meshbench/meshbench/internal/resources"
)

// cgroupRoot is the mount point of the cgroup file systems.
const cgroupRoot = "/sys/fs/cgroup"

// v2Controllers are the controllers the lab passes on to its nodes and
// containers on cgroup v2.
var v2Controllers = []string{"cpu", "memory", "cpuset"}

// The v1 controllers the lab uses.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "cpuset"}

// cgroups places the lab's processes in cgroups. On v1 (legacy or hybrid)
// each controller has its own tree (cpu and cpuacct may share one), and
// the lab's top directory is below the cgroup meshbench runs in, in each.
// On v2 there is one tree, and the kernel enables a controller for a
// cgroup's children only where the cgroup holds no process itself; the
// cgroup meshbench runs in (a login's session scope, a service) holds at
// least meshbench, and it is not meshbench's to change. So the lab's top
// is in a cgroup of its own: under systemd, a transient scope unit with
// Delegate=yes (Unit, at Scope); without systemd, a directory meshbench
// creates below the cgroup root.
type cgroups struct {
	V2 bool `json:"v2"`
	// Dirs maps a controller ("" on v2) to the lab's top directory in its
	// tree, <prefix>-lab: below the cgroup meshbench runs in (v1), below
	// the lab's scope (v2 under systemd), or below the root (v2).
	Dirs map[string]string `json:"dirs"`
	// Unit is the lab's systemd scope and Scope its cgroup directory,
	// recorded before the scope is started, so that lab down finds it
	// after a crash at any point.
	Unit  string `json:"unit,omitempty"`
	Scope string `json:"scope,omitempty"`
}

// labCgroupName is the lab's top cgroup directory name.
func labCgroupName(prefix string) string { return prefix + "-lab" }

// scopeUnit is the name of a lab's systemd scope, which lab down derives
// from the prefix when the lab's state is gone.
func scopeUnit(prefix string) string { return "meshbench-" + prefix + ".scope" }

// scopeSlice holds the labs' scopes, beside the host's services and the
// container runtimes' scopes.
const scopeSlice = "system.slice"

// holderCgroup is the leaf, in the lab's scope, of the process that keeps
// the scope for the lab's life: systemd removes a scope when its last
// process exits, and a lab between two workloads has none of its own.
const holderCgroup = "holder"

// nodeCgroup is a node's directory, relative to the lab's top.
func nodeCgroup(node string) string { return "n-" + node }

// containerCgroup is a container's directory, relative to the lab's top.
func containerCgroup(node, namespace, pod, container string) string {
	return filepath.Join(nodeCgroup(node), namespace+"_"+pod, container)
}

// detectCgroups finds where a lab with this prefix keeps its cgroups on
// this host.
func detectCgroups(prefix string) (cgroups, error) { return realHost().detectCgroups(prefix) }

// detectCgroups finds the lab's top directories, and on v2 under systemd
// its scope, from the cgroup mount and /proc/self/cgroup. It changes
// nothing; v2Problem says whether the lab can use them.
func (h host) detectCgroups(prefix string) (cgroups, error) {
	if h.cgroupMode() == cgroupV2 {
		if h.systemdBooted() {
			unit := scopeUnit(prefix)
			scope := filepath.Join(h.cgroupRoot, scopeSlice, unit)
			return cgroups{V2: true, Unit: unit, Scope: scope, Dirs: map[string]string{"": filepath.Join(scope, labCgroupName(prefix))}}, nil
		}
		return cgroups{V2: true, Dirs: map[string]string{"": filepath.Join(h.cgroupRoot, labCgroupName(prefix))}}, nil
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroups{}, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	paths := map[string]string{} // controller -> own path
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	cg := cgroups{Dirs: map[string]string{}}
	for _, c := range v1Controllers {
		p, ok := paths[c]
		if !ok {
			return cgroups{}, fmt.Errorf("cgroup v1 controller %s is not mounted: the lab needs cpu, cpuacct, memory and cpuset", c)
		}
		mnt, err := v1Mount(c)
		if err != nil {
			return cgroups{}, err
		}
		cg.Dirs[c] = filepath.Join(mnt, p, labCgroupName(prefix))
	}
	return cg, nil
}

// missingControllers are the lab's v2 controllers not listed in a
// cgroup's controller file (cgroup.controllers, cgroup.subtree_control).
func missingControllers(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	have := strings.Fields(string(b))
	var out []string
	for _, c := range v2Controllers {
		if !slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// v1Mount finds where a v1 controller is mounted: /sys/fs/cgroup/<c>, or a
// co-mount such as cpu,cpuacct.
func v1Mount(c string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// ... mountpoint ... - fstype source superoptions
		fields := strings.Fields(s.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) || fields[sep+1] != "cgroup" {
			continue
		}
		for _, o := range strings.Split(fields[sep+3], ",") {
			if o == c {
				return fields[4], nil
			}
		}
	}
	return "", fmt.Errorf("cgroup v1 controller %s is not mounted", c)
}

// hierarchies returns the distinct top directories (cpu and cpuacct may
// be one).
func (cg cgroups) hierarchies() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range append([]string{""}, v1Controllers...) {
		if d, ok := cg.Dirs[c]; ok && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// setupTop creates the lab's top directories. On v1 the cpuset one copies
// its parent's CPUs and memory nodes, which a v1 cpuset needs before it
// can hold tasks. On v2 under systemd it first starts the lab's scope
// (startScope); on v2 it then passes the controllers on to the lab's
// nodes. It enables controllers only in cgroups it created, which hold
// no process.
func (cg *cgroups) setupTop(ctx context.Context, h host, name string) error {
	if cg.Unit != "" {
		if err := cg.startScope(ctx, h, name); err != nil {
			return err
		}
	}
	for _, d := range cg.hierarchies() {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", d, err)
		}
	}
	if cg.V2 {
		return writeFile(filepath.Join(cg.Dirs[""], "cgroup.subtree_control"), controlList("+", v2Controllers))
	}
	return copyCpuset(cg.Dirs["cpuset"])
}

// startScope starts the lab's systemd scope around a holder process, a
// sleep that dies with meshbench (its parent-death signal): the scope
// lives while the lab does, and after a kill -9 of meshbench the holder
// and the containers die, and systemd removes the empty scope by itself.
// systemd puts the holder in the scope's own cgroup; the kernel passes
// controllers on only from a cgroup that holds no process, so the holder
// moves to a leaf of its own first. If systemd placed the scope elsewhere
// than detectCgroups expected, the lab's top follows it.
func (cg *cgroups) startScope(ctx context.Context, h host, name string) error {
	sd, err := h.dial(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()
	hold := exec.Command("sleep", "2147483647")
	if err := startIn("", hold); err != nil {
		return fmt.Errorf("start the process that holds the lab's systemd scope: %w", err)
	}
	go func() { _ = hold.Wait() }() // reaped whenever it dies
	rel, err := sd.StartScope(ctx, cg.Unit, scopeSlice, "meshbench lab "+name, hold.Process.Pid)
	if err != nil {
		_ = hold.Process.Kill()
		if errors.Is(err, ErrAlreadyUp) {
			cg.Unit = "" // another lab's: not this one's to stop
			return fmt.Errorf("%w; run meshbench lab down --name %s, or use another prefix", err, name)
		}
		return err
	}
	if scope := filepath.Join(h.cgroupRoot, rel); scope != cg.Scope {
		cg.Dirs[""] = filepath.Join(scope, filepath.Base(cg.Dirs[""]))
		cg.Scope = scope
	}
	leaf := filepath.Join(cg.Scope, holderCgroup)
	if err := os.Mkdir(leaf, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", leaf, err)
	}
	if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(hold.Process.Pid)); err != nil {
		return err
	}
	return writeFile(filepath.Join(cg.Scope, "cgroup.subtree_control"), controlList("+", v2Controllers))
}

// scopeFree refuses a lab whose systemd scope another lab runs: systemd
// has one unit of a name, and lab down of the new lab would stop it.
func scopeFree(ctx context.Context, h host, cg cgroups, prefix string) error {
	if cg.Unit == "" {
		return nil
	}
	sd, err := h.dial(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()
	rel, err := sd.ScopeCgroup(ctx, cg.Unit)
	if err != nil {
		return err
	}
	if rel != "" {
		return fmt.Errorf("%w: systemd runs the scope %s; run meshbench lab down --prefix %s, or use another prefix", ErrAlreadyUp, cg.Unit, prefix)
	}
	return nil
}

// controlList is a cgroup.subtree_control write: "+cpu +memory".
func controlList(sign string, cs []string) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = sign + c
	}
	return strings.Join(out, " ")
}

func copyCpuset(dir string) error {
	parent := filepath.Dir(dir)
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		b, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if err := writeFile(filepath.Join(dir, f), strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	return nil
}

// setupNode creates a node's directories and pins it to cpus when given.
func (cg cgroups) setupNode(node, cpus string) error {
	rel := nodeCgroup(node)
	for _, d := range cg.hierarchies() {
		if err := os.MkdirAll(filepath.Join(d, rel), 0o755); err != nil {
			return fmt.Errorf("create cgroup for node %s: %w", node, err)
		}
	}
	if cg.V2 {
		dir := filepath.Join(cg.Dirs[""], rel)
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu +memory"); err != nil {
			return err
		}
		if cpus != "" {
			return writeFile(filepath.Join(dir, "cpuset.cpus"), cpus)
		}
		return nil
	}
	dir := filepath.Join(cg.Dirs["cpuset"], rel)
	if err := copyCpuset(dir); err != nil {
		return err
	}
	if cpus != "" {
		return writeFile(filepath.Join(dir, "cpuset.cpus"), cpus)
	}
	return nil
}

// setupContainer creates a container's directories under its node, applies
// its requests and limits, and returns the cgroup.procs files the
// container's process must join.
func (cg cgroups) setupContainer(rel string, r resources.Requirements) ([]string, error) {
	if cg.V2 {
		dir := filepath.Join(cg.Dirs[""], rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		// Pod directories pass the controllers on to their containers.
		if err := writeFile(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"), "+cpu +memory"); err != nil {
			return nil, err
		}
		quota := "max"
		if q := cpuQuotaUS(r); q > 0 {
			quota = strconv.FormatInt(q, 10)
		}
		mem := "max"
		if r.MemLimitBytes > 0 {
			mem = strconv.FormatInt(r.MemLimitBytes, 10)
		}
		for f, v := range map[string]string{
			"cpu.weight": strconv.FormatUint(cpuWeight(r), 10),
			"cpu.max":    fmt.Sprintf("%s %d", quota, cfsPeriodUS),
			"memory.max": mem,
		} {
			if err := writeFile(filepath.Join(dir, f), v); err != nil {
				return nil, err
			}
		}
		return []string{filepath.Join(dir, "cgroup.procs")}, nil
	}
	var procs []string
	seen := map[string]bool{}
	for _, c := range []string{"cpu", "cpuacct", "memory"} {
		dir := filepath.Join(cg.Dirs[c], rel)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		procs = append(procs, filepath.Join(dir, "cgroup.procs"))
	}
	cpu := filepath.Join(cg.Dirs["cpu"], rel)
	settings := [][2]string{
		{filepath.Join(cpu, "cpu.shares"), strconv.FormatUint(cpuShares(r), 10)},
		{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriodUS)},
		{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(cpuQuotaUS(r), 10)},
	}
	if r.MemLimitBytes > 0 {
		settings = append(settings, [2]string{filepath.Join(cg.Dirs["memory"], rel, "memory.limit_in_bytes"), strconv.FormatInt(r.MemLimitBytes, 10)})
	}
	for _, s := range settings {
		if err := writeFile(s[0], s[1]); err != nil {
			return nil, err
		}
	}
	// The cpuset is the node's: a v1 cpuset directory per container would
	// need its own CPUs and memory nodes for nothing.
	node := strings.SplitN(rel, "/", 2)[0]
	procs = append(procs, filepath.Join(cg.Dirs["cpuset"], node, "cgroup.procs"))
	return procs, nil
}

// pids returns the processes in a cgroup directory and below it.
func (cg cgroups) pids(rel string) []int { return pidsBelow(cg.dir(rel)) }

// kill SIGKILLs every process in a cgroup directory and below it.
func (cg cgroups) kill(rel string) { killTree(cg.dir(rel)) }

// dir is a directory below the lab's top that lists every process in it:
// the v2 tree's, or the v1 memory tree's.
func (cg cgroups) dir(rel string) string {
	if cg.V2 {
		return filepath.Join(cg.Dirs[""], rel)
	}
	return filepath.Join(cg.Dirs["memory"], rel)
}

// killTree SIGKILLs every process in a cgroup directory and below it, and
// returns the pids it found there. On v2 it writes cgroup.kill where the
// kernel has it (5.14 and later), which also reaches a process forked
// meanwhile; elsewhere it signals each pid.
func killTree(dir string) []int {
	pids := pidsBelow(dir)
	if len(pids) == 0 {
		return nil
	}
	// Without O_CREATE: a v1 cgroup, or an older kernel, has no such file.
	if f, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
		_, werr := f.WriteString("1")
		if cerr := f.Close(); werr == nil && cerr == nil {
			return pids
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}

func pidsBelow(dir string) []int {
	var out []int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}

// remove deletes a cgroup directory and everything below it, in every
// tree, deepest first. It waits a little for exiting processes to leave.
func (cg cgroups) remove(rel string) error {
	var errs []error
	for _, top := range cg.hierarchies() {
		if err := removeTree(filepath.Join(top, rel)); err != nil {
			errs = append(errs, err)
		}
	}
	// The node-level cpuset of a v1 container is shared: never removed here.
	return errors.Join(errs...)
}

func removeTree(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		var err error
		for try := 0; try < 50; try++ {
			err = os.Remove(dirs[i])
			if err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond) // a dying process still listed
		}
		if err != nil {
			return fmt.Errorf("remove cgroup %s: %w", dirs[i], err)
		}
	}
	return nil
}

func writeFile(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s to %s: %w", value, path, err)
	}
	return nil
}

// The kubelet's constants for turning requests and limits into cgroup
// values (pkg/kubelet/cm/helpers_linux.go).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	cfsPeriodUS   = 100000
	minQuotaUS    = 1000
	maxCPUWeight  = 10000
	minCPUWeight  = 1
	milliCPUToCPU = 1000
)

// cpuShares maps the CPU request to cgroup v1 cpu.shares: 1024 per core,
// and the minimum of 2 (best effort) when there is no request.
func cpuShares(r resources.Requirements) uint64 {
	m := r.Effective().CPURequestMilli
	if m <= 0 {
		return minShares
	}
	s := uint64(m) * sharesPerCPU / milliCPUToCPU
	return min(max(s, minShares), maxShares)
}

// cpuWeight maps shares to cgroup v2 cpu.weight, with the formula the
// kubelet and runc share: [2, 262144] onto [1, 10000].
func cpuWeight(r resources.Requirements) uint64 {
	s := cpuShares(r)
	return minCPUWeight + ((s-minShares)*(maxCPUWeight-minCPUWeight))/(maxShares-minShares)
}

// cpuQuotaUS maps the CPU limit to a CFS quota per 100 ms period, or -1
// for no limit; at least 1 ms, as the kubelet enforces.
func cpuQuotaUS(r resources.Requirements) int64 {
	if r.CPULimitMilli <= 0 {
		return -1
	}
	return max(r.CPULimitMilli*cfsPeriodUS/milliCPUToCPU, minQuotaUS)
}
