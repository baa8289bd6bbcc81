package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/resources"
)

// cgroupRoot is the mount point of the cgroup file systems.
const cgroupRoot = "/sys/fs/cgroup"

// v2Controllers are the controllers the lab enables below its parent on
// cgroup v2.
var v2Controllers = []string{"cpu", "memory", "cpuset"}

// The v1 controllers the lab uses.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "cpuset"}

// cgroups places the lab's processes in cgroups, under the cgroup the lab
// was started in. On v1 each controller has its own tree (cpu and cpuacct
// may share one); on v2 there is one tree.
type cgroups struct {
	V2 bool `json:"v2"`
	// Dirs maps a controller ("" on v2) to the lab's top directory in its
	// tree: <mount>/<own cgroup>/<prefix>-lab.
	Dirs map[string]string `json:"dirs"`
	// Enabled are the controllers (v2) the lab turned on in its parent's
	// cgroup.subtree_control, which were off: lab down turns them off
	// again. Recorded before they are turned on.
	Enabled []string `json:"enabled,omitempty"`
}

// labCgroupName is the lab's top cgroup directory name.
func labCgroupName(prefix string) string { return prefix + "-lab" }

// nodeCgroup is a node's directory, relative to the lab's top.
func nodeCgroup(node string) string { return "n-" + node }

// containerCgroup is a container's directory, relative to the lab's top.
func containerCgroup(node, namespace, pod, container string) string {
	return filepath.Join(nodeCgroup(node), namespace+"_"+pod, container)
}

// detectCgroups finds the lab's top directories for this process, from
// /proc/self/cgroup and the hierarchies mounted at /sys/fs/cgroup.
func detectCgroups(prefix string) (cgroups, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroups{}, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	return detectCgroupsAt(cgroupRoot, string(own), prefix)
}

// detectCgroupsAt finds the lab's top directories below root for a
// process whose /proc/PID/cgroup reads own. On v2 it also notes which of
// the lab's controllers are off in the parent's cgroup.subtree_control, so
// that setupTop turns on, and lab down off, only those.
func detectCgroupsAt(root, own, prefix string) (cgroups, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		for _, line := range strings.Split(own, "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				dir := filepath.Join(root, rest, labCgroupName(prefix))
				b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"))
				if err != nil {
					return cgroups{}, fmt.Errorf("cgroup v2: %w", err)
				}
				on := strings.Fields(string(b))
				cg := cgroups{V2: true, Dirs: map[string]string{"": dir}}
				for _, c := range v2Controllers {
					if !slices.Contains(on, c) {
						cg.Enabled = append(cg.Enabled, c)
					}
				}
				return cg, nil
			}
		}
		return cgroups{}, errors.New("cgroup v2: no 0:: line in /proc/self/cgroup")
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
// can hold tasks; on v2 the controllers are enabled for the subtree.
func (cg cgroups) setupTop() error {
	for _, d := range cg.hierarchies() {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", d, err)
		}
	}
	if cg.V2 {
		parent := filepath.Dir(cg.Dirs[""])
		if len(cg.Enabled) > 0 {
			if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), controlList("+", cg.Enabled)); err != nil {
				return fmt.Errorf("cgroup v2: enable %s below %s (run meshbench in a delegated cgroup): %w", strings.Join(cg.Enabled, ", "), parent, err)
			}
		}
		return writeFile(filepath.Join(cg.Dirs[""], "cgroup.subtree_control"), controlList("+", v2Controllers))
	}
	return copyCpuset(cg.Dirs["cpuset"])
}

// controlList is a cgroup.subtree_control write: "+cpu +memory".
func controlList(sign string, cs []string) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = sign + c
	}
	return strings.Join(out, " ")
}

// restoreParent turns off, in the parent's cgroup.subtree_control, the
// controllers the lab turned on there, once the lab's own directory is
// gone. A controller another child of the parent passes on in its own
// cgroup.subtree_control (another lab started from the same cgroup) is
// in use and left on; it is returned in kept.
func (cg cgroups) restoreParent() (kept []string, err error) {
	if !cg.V2 || len(cg.Enabled) == 0 {
		return nil, nil
	}
	top := cg.Dirs[""]
	parent := filepath.Dir(top)
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	used := map[string]bool{}
	for _, e := range ents {
		if !e.IsDir() || filepath.Join(parent, e.Name()) == top {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(parent, e.Name(), "cgroup.subtree_control"))
		for _, c := range strings.Fields(string(b)) {
			used[c] = true
		}
	}
	var off []string
	for _, c := range cg.Enabled {
		if used[c] {
			kept = append(kept, c)
		} else {
			off = append(off, c)
		}
	}
	if len(off) == 0 {
		return kept, nil
	}
	return kept, writeFile(filepath.Join(parent, "cgroup.subtree_control"), controlList("-", off))
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
func (cg cgroups) pids(rel string) []int {
	dir := filepath.Join(cg.Dirs["memory"], rel)
	if cg.V2 {
		dir = filepath.Join(cg.Dirs[""], rel)
	}
	return pidsBelow(dir)
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
