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
	WorkingSet int64  // memory usage less inactive file pages, as cAdvisor
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
		cur, err := readUint(filepath.Join(dir, "memory.current"))
		if err != nil {
			return u, err
		}
		stat, err := readKV(filepath.Join(dir, "memory.stat"))
		if err != nil {
			return u, err
		}
		u.WorkingSet = workingSet(cur, stat["inactive_file"])
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
	cur, err := readUint(filepath.Join(mem, "memory.usage_in_bytes"))
	if err != nil {
		return u, err
	}
	stat, err := readKV(filepath.Join(mem, "memory.stat"))
	if err != nil {
		return u, err
	}
	u.WorkingSet = workingSet(cur, stat["total_inactive_file"])
	oom, err := readKV(filepath.Join(mem, "memory.oom_control"))
	if err != nil {
		return u, err
	}
	u.OOMKills = oom["oom_kill"]
	return u, nil
}

// workingSet is cAdvisor's: usage less inactive file pages, never negative.
func workingSet(usage, inactiveFile uint64) int64 {
	if inactiveFile >= usage {
		return 0
	}
	return int64(usage - inactiveFile)
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
