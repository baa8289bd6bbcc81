package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
)

// Other is a lab, found by its state directory, that is not the caller's.
type Other struct {
	Name       string
	StateDir   string
	Prefix     string
	Owner      int
	OwnerAlive bool
	// Supervisor says the owner is a detached `meshbench lab supervise`.
	Supervisor bool
	// Procs counts the processes still in its cgroups.
	Procs int
	// CPUs are the CPUs its nodes are pinned to; nil when a node is
	// unpinned and so may run anywhere.
	CPUs []int
}

// Others lists the labs under the state root, except the one named self.
func Others(root, self string) ([]Other, error) { return othersAt(root, cgroupRoot, self) }

// othersAt lists them with their states checked against the cgroup
// mounts at cgRoot.
func othersAt(root, cgRoot, self string) ([]Other, error) {
	dirs, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list labs in %s: %w", root, err)
	}
	var out []Other
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == self {
			continue
		}
		st, err := readStateAt(filepath.Join(root, d.Name()), cgRoot)
		if err != nil {
			continue // not a lab, one still writing its first state, or a state naming what is not a lab's
		}
		o := Other{Name: st.Name, StateDir: filepath.Join(root, d.Name()), Prefix: st.Prefix, Supervisor: st.Supervisor, Owner: st.Owner, OwnerAlive: st.ownerAlive()}
		for _, top := range st.Cgroups.hierarchies() {
			o.Procs = max(o.Procs, len(pidsBelow(top)))
		}
		pinned := true
		for _, n := range st.Nodes {
			cpus, err := infra.ParseCPUList(n.CPUs)
			if n.CPUs == "" || err != nil {
				pinned = false
				break
			}
			o.CPUs = append(o.CPUs, cpus...)
		}
		if !pinned {
			o.CPUs = nil
		}
		out = append(out, o)
	}
	return out, nil
}

// Overlaps says whether the lab may run on any of the CPUs; nil CPUs, on
// either side, means every CPU.
func (o Other) Overlaps(cpus []int) bool {
	if o.CPUs == nil || cpus == nil {
		return true
	}
	return slices.ContainsFunc(o.CPUs, func(c int) bool { return slices.Contains(cpus, c) })
}

func (o Other) String() string {
	owner := fmt.Sprintf("owner pid %d alive", o.Owner)
	if !o.OwnerAlive {
		owner = fmt.Sprintf("owner pid %d gone", o.Owner)
	}
	where := "any CPU"
	if o.CPUs != nil {
		where = "CPUs " + formatCPUs(o.CPUs)
	}
	return fmt.Sprintf("lab %s (%s, %d processes on %s)", o.Name, owner, o.Procs, where)
}

// BusyFinding fails when another lab's processes run on CPUs the nodes
// (pinned to cpuLists, "" for unpinned) would use: they would be measured
// with the study.
func BusyFinding(root, self string, cpuLists []string, shared bool) platform.Finding {
	others, err := Others(root, self)
	return busyFinding(root, others, err, cpuLists, shared)
}

// busyFinding is BusyFinding on the labs found under root.
func busyFinding(root string, others []Other, err error, cpuLists []string, shared bool) (f platform.Finding) {
	f.Check = "cpus-free"
	if err != nil {
		f.Detail, f.Fix = err.Error(), "check "+root
		return f
	}
	var want []int
	for _, l := range cpuLists {
		cpus, err := infra.ParseCPUList(l)
		if l == "" || err != nil {
			want = nil
			break
		}
		want = append(want, cpus...)
	}
	var busy, gone []string
	for _, o := range others {
		if o.Procs == 0 || !o.Overlaps(want) {
			continue
		}
		busy = append(busy, o.String())
		if !o.OwnerAlive {
			gone = append(gone, o.Name)
		}
	}
	switch {
	case len(busy) == 0:
		f.OK, f.Detail = true, "no other lab runs on the study's CPUs"
	case shared:
		f.OK, f.Detail = true, "shared host: measuring alongside "+strings.Join(busy, "; ")
	default:
		f.Detail = "another lab runs on the study's CPUs and would be measured with it: " + strings.Join(busy, "; ")
		f.Fix = "wait for it to finish, or pass --shared-host to measure anyway"
		if len(gone) > 0 {
			f.Fix = "meshbench lab down (removes " + strings.Join(gone, ", ") + ", whose owner is gone); " + f.Fix
		}
	}
	return f
}
