package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/resources"
)

func TestCgroupValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		r      resources.Requirements
		shares uint64
		weight uint64
		quota  int64
	}{
		{name: "best effort", r: resources.Requirements{}, shares: 2, weight: 1, quota: -1},
		{name: "request only", r: resources.Requirements{CPURequestMilli: 100}, shares: 102, weight: 4, quota: -1},
		{name: "guaranteed 700m", r: resources.Requirements{CPURequestMilli: 700, CPULimitMilli: 700}, shares: 716, weight: 28, quota: 70000},
		{name: "limit defaults request", r: resources.Requirements{CPULimitMilli: 500}, shares: 512, weight: 20, quota: 50000},
		{name: "one core", r: resources.Requirements{CPURequestMilli: 1000}, shares: 1024, weight: 39, quota: -1},
		{name: "tiny limit floored", r: resources.Requirements{CPULimitMilli: 5}, shares: 5, weight: 1, quota: 1000},
		{name: "huge request capped", r: resources.Requirements{CPURequestMilli: 1 << 30}, shares: 262144, weight: 10000, quota: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuShares(tt.r); got != tt.shares {
				t.Errorf("shares = %d, want %d", got, tt.shares)
			}
			if got := cpuWeight(tt.r); got != tt.weight {
				t.Errorf("weight = %d, want %d", got, tt.weight)
			}
			if got := cpuQuotaUS(tt.r); got != tt.quota {
				t.Errorf("quota = %d, want %d", got, tt.quota)
			}
		})
	}
}

func TestEffectiveResources(t *testing.T) {
	t.Parallel()
	r := resources.Requirements{CPULimitMilli: 200, MemLimitBytes: 64 << 20}.Effective()
	if r.CPURequestMilli != 200 || r.MemRequestBytes != 64<<20 {
		t.Errorf("effective = %+v, want requests equal to limits", r)
	}
}

// The working set is the same sum of memory.stat's counters on both
// cgroup versions: v1's hierarchical total_ counters and v2's own, with
// neither the inactive file pages nor the kernel's memory.
func TestWorkingSet(t *testing.T) {
	t.Parallel()
	v1 := map[string]uint64{"cache": 1, "rss": 2, "total_active_anon": 40, "total_inactive_anon": 30, "total_active_file": 20,
		"total_inactive_file": 1000, "total_unevictable": 10, "total_cache": 1020, "total_rss": 70}
	v2 := map[string]uint64{"anon": 70, "file": 1020, "kernel": 500, "sock": 300, "slab": 100, "active_anon": 40,
		"inactive_anon": 30, "active_file": 20, "inactive_file": 1000, "unevictable": 10}
	for _, tt := range []struct {
		name   string
		stat   map[string]uint64
		prefix string
	}{{"v1", v1, "total_"}, {"v2", v2, ""}} {
		got, err := workingSet(tt.stat, tt.prefix)
		if err != nil || got != 100 {
			t.Errorf("%s: workingSet = %d, %v; want 100 (anon 70, active file 20, unevictable 10)", tt.name, got, err)
		}
	}
	delete(v2, "active_file")
	if _, err := workingSet(v2, ""); err == nil {
		t.Error("a memory.stat without active_file gave a working set")
	}
}

// killTree writes cgroup.kill where the cgroup has one (v2, 5.14 and
// later) and signals each pid where it has none. On a plain-file tree the
// write reaches no process, which shows which way it went.
func TestKillTree(t *testing.T) {
	t.Parallel()
	for _, withKill := range []bool{true, false} {
		dir := t.TempDir()
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitc := make(chan error, 1)
		go func() { waitc <- cmd.Wait() }()
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		kill := filepath.Join(dir, "cgroup.kill")
		if withKill {
			if err := os.WriteFile(kill, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := killTree(dir); len(got) != 1 || got[0] != cmd.Process.Pid {
			t.Errorf("cgroup.kill %v: killTree found %v, want [%d]", withKill, got, cmd.Process.Pid)
		}
		if withKill {
			if b, _ := os.ReadFile(kill); string(b) != "1" {
				t.Errorf("cgroup.kill holds %q, want 1", b)
			}
			select {
			case <-waitc:
				t.Error("killTree signalled the process where cgroup.kill was there to do it")
				continue
			case <-time.After(50 * time.Millisecond):
			}
			_ = cmd.Process.Kill()
			<-waitc
			continue
		}
		if _, err := os.Stat(kill); err == nil {
			t.Error("killTree created cgroup.kill where there was none")
		}
		select {
		case <-waitc:
		case <-time.After(5 * time.Second):
			t.Error("process not killed without cgroup.kill")
			_ = cmd.Process.Kill()
		}
	}
}
