package cpstudy

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroups holds the study's two v1 cgroups in each of the cpuset, cpuacct
// and memory hierarchies: one for istiod, pinned to its own CPU, and one
// for everything else (the API server, etcd, kwok and this process with
// its synthetic clients).
type cgroups struct {
	dirs   map[string]string // controller -> the study's top directory
	orig   map[string]string // controller -> this process's own cgroup directory
	Istiod string            `json:"istiod_cpus"`
	Rest   string            `json:"rest_cpus"`
}

var controllers = []string{"cpuset", "cpuacct", "memory"}

// planCgroups finds where <own cgroup>/<name>/{istiod,rest} go in each
// hierarchy and which CPUs each gets, creating nothing (create does).
func planCgroups(name string) (*cgroups, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return nil, errors.New("the control-plane study pins istiod with cgroup v1 cpusets, and this host has cgroup v2 only")
	}
	paths := map[string]string{}
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	cg := &cgroups{dirs: map[string]string{}, orig: map[string]string{}}
	for _, c := range controllers {
		p, ok := paths[c]
		if !ok {
			return nil, fmt.Errorf("cgroup v1 controller %s is not mounted", c)
		}
		mnt := filepath.Join("/sys/fs/cgroup", c)
		cg.orig[c] = filepath.Join(mnt, p)
		cg.dirs[c] = filepath.Join(mnt, p, name)
	}
	cpus, err := readCPUList(filepath.Join(cg.orig["cpuset"], "cpuset.cpus"))
	if err != nil {
		return nil, err
	}
	if len(cpus) < 2 {
		return nil, fmt.Errorf("the control-plane study needs two CPUs, one for istiod alone; this cgroup has %d", len(cpus))
	}
	cg.Istiod = strconv.Itoa(cpus[len(cpus)-1])
	rest := make([]string, len(cpus)-1)
	for i, c := range cpus[:len(cpus)-1] {
		rest[i] = strconv.Itoa(c)
	}
	cg.Rest = strings.Join(rest, ",")
	return cg, nil
}

// tops are the study's top directories, one per hierarchy.
func (cg *cgroups) tops() []string {
	var out []string
	for _, c := range controllers {
		out = append(out, cg.dirs[c])
	}
	return out
}

// create makes the groups, pins istiod to its CPU and the rest to the
// others, and moves this process into rest.
func (cg *cgroups) create() error {
	mems, err := os.ReadFile(filepath.Join(cg.orig["cpuset"], "cpuset.mems"))
	if err != nil {
		return err
	}
	for _, c := range controllers {
		for _, sub := range []string{"", "istiod", "rest"} {
			d := filepath.Join(cg.dirs[c], sub)
			if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				cg.remove()
				return fmt.Errorf("create cgroup %s: %w", d, err)
			}
			if c != "cpuset" {
				continue
			}
			cpus := map[string]string{"": cg.Istiod + "," + cg.Rest, "istiod": cg.Istiod, "rest": cg.Rest}[sub]
			if err := write(filepath.Join(d, "cpuset.cpus"), cpus); err != nil {
				cg.remove()
				return err
			}
			if err := write(filepath.Join(d, "cpuset.mems"), strings.TrimSpace(string(mems))); err != nil {
				cg.remove()
				return err
			}
		}
	}
	if err := cg.join("rest", os.Getpid()); err != nil {
		cg.remove()
		return err
	}
	return nil
}

// join moves a process, with all its threads, into one of the groups.
func (cg *cgroups) join(group string, pid int) error {
	for _, c := range controllers {
		if err := write(filepath.Join(cg.dirs[c], group, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// remove moves this process back where it was and removes the groups;
// the processes in them must have ended.
func (cg *cgroups) remove() {
	for _, c := range controllers {
		_ = write(filepath.Join(cg.orig[c], "cgroup.procs"), strconv.Itoa(os.Getpid()))
		for _, sub := range []string{"istiod", "rest", ""} {
			_ = os.Remove(filepath.Join(cg.dirs[c], sub))
		}
	}
}

// usage is one reading of a group's counters.
type usage struct {
	CPUNanos   uint64
	WorkingSet int64 // usage less inactive file pages, as cAdvisor reports it
}

func (cg *cgroups) read(group string) (usage, error) {
	var u usage
	b, err := os.ReadFile(filepath.Join(cg.dirs["cpuacct"], group, "cpuacct.usage"))
	if err != nil {
		return u, err
	}
	if u.CPUNanos, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
		return u, err
	}
	mem := filepath.Join(cg.dirs["memory"], group)
	b, err = os.ReadFile(filepath.Join(mem, "memory.usage_in_bytes"))
	if err != nil {
		return u, err
	}
	total, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return u, err
	}
	inactive, err := statValue(filepath.Join(mem, "memory.stat"), "total_inactive_file")
	if err != nil {
		return u, err
	}
	if inactive < total {
		u.WorkingSet = int64(total - inactive)
	}
	return u, nil
}

func statValue(path, key string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), key+" "); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

func write(path, v string) error {
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readCPUList parses a cpuset list such as "0-3,6".
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, part, err)
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("%s: %q: %w", path, part, err)
			}
		}
		for c := a; c <= z; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
