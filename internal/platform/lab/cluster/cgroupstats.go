package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// usage is one reading of a cgroup's counters.
type usage struct {
	CPUNanos   uint64 // cumulative CPU time
	WorkingSet int64  // user pages less inactive file pages: see workingSet
	Throttled  uint64 // CFS periods in which the cgroup was throttled
	OOMKills   uint64
}

// read returns a cgroup's counters, rel being relative to the lab's top.
func (cg cgroups) read(rel string) (usage, error) {
	var u usage
	if cg.V2 {
		dir := filepath.Join(cg.Dirs[""], rel)
		cpu, err := readKV(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			return u, err
		}
		u.CPUNanos = cpu["usage_usec"] * 1000
		u.Throttled = cpu["nr_throttled"]
		stat, err := readKV(filepath.Join(dir, "memory.stat"))
		if err != nil {
			return u, err
		}
		if u.WorkingSet, err = workingSet(stat, ""); err != nil {
			return u, fmt.Errorf("read cgroup %s: %w", dir, err)
		}
		ev, err := readKV(filepath.Join(dir, "memory.events"))
		if err != nil {
			return u, err
		}
		u.OOMKills = ev["oom_kill"]
		return u, nil
	}
	var err error
	if u.CPUNanos, err = readUint(filepath.Join(cg.Dirs["cpuacct"], rel, "cpuacct.usage")); err != nil {
		return u, err
	}
	cpu, err := readKV(filepath.Join(cg.Dirs["cpu"], rel, "cpu.stat"))
	if err != nil {
		return u, err
	}
	u.Throttled = cpu["nr_throttled"]
	mem := filepath.Join(cg.Dirs["memory"], rel)
	stat, err := readKV(filepath.Join(mem, "memory.stat"))
	if err != nil {
		return u, err
	}
	if u.WorkingSet, err = workingSet(stat, "total_"); err != nil {
		return u, fmt.Errorf("read cgroup %s: %w", mem, err)
	}
	oom, err := readKV(filepath.Join(mem, "memory.oom_control"))
	if err != nil {
		return u, err
	}
	u.OOMKills = oom["oom_kill"]
	return u, nil
}

// workingSetPages are the memory.stat counters the working set sums: the
// anonymous pages (shared memory and tmpfs included, which the kernel
// keeps on the anonymous lists), the file pages used recently, and pages
// locked in memory. Both cgroup versions keep them under these names (v1
// with a "total_" prefix for the cgroup and its children, which v2's
// counters always include).
var workingSetPages = []string{"active_anon", "inactive_anon", "active_file", "unevictable"}

// workingSet is the memory a container cannot give back without paging,
// computed alike on cgroup v1 and v2 from memory.stat (prefix "total_" on
// v1): cAdvisor's usage less inactive file pages, without the kernel's
// own memory (slab, stacks, page tables, socket buffers). The usage
// counters disagree about that part: v2's memory.current includes socket
// buffers, v1's memory.usage_in_bytes does not (v1 counts them apart, in
// memory.kmem.tcp), and v1 charges the rest only on kernels built and
// booted to (CONFIG_MEMCG_KMEM, no cgroup.memory=nokmem). So a figure
// from either host means the same. docs/results.md says so.
func workingSet(stat map[string]uint64, prefix string) (int64, error) {
	var sum uint64
	for _, k := range workingSetPages {
		v, ok := stat[prefix+k]
		if !ok {
			return 0, fmt.Errorf("memory.stat has no %s", prefix+k)
		}
		sum += v
	}
	return int64(sum), nil
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read cgroup: %w", err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read cgroup %s: %w", path, err)
	}
	return v, nil
}

// readKV reads a "key value" per line file such as cpu.stat.
func readKV(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read cgroup: %w", err)
	}
	defer f.Close()
	m := map[string]uint64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m, s.Err()
}
