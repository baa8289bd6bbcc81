package analysis

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// CapacityMesh is one mesh's capacity search, read for a report: the
// entry study.json holds, and its trials' resource usage.
type CapacityMesh struct {
	results.Capacity
	// Usage is, for each conclusive trial whose cell holds resource
	// samples, its achieved rate and what each component role used.
	Usage []TrialUsage
	// Fits is, per component role in report order, the line through the
	// role's cores against the achieved rate over Usage.
	Fits []RoleFit
	// MemoryGB is the mean working set over Usage of everything but the
	// load generators, in GiB.
	MemoryGB float64
	// Unread lists trial cell files that could not be read.
	Unread []string
}

// TrialUsage is one trial's achieved rate and mean usage by role.
type TrialUsage struct {
	Rate     float64
	Cores    map[metrics.Role]float64
	MemBytes float64 // everything but the load generators
}

// RoleFit splits a role's CPU into an idle part and a per-request part:
// cores = Idle + PerRPS x rate, fitted by least squares over N trials. R2
// says how well the line fits; with every trial at one rate there is no
// slope, and Idle is their mean.
type RoleFit struct {
	Role   metrics.Role `json:"role"`
	Idle   float64      `json:"idle_cores"`
	PerRPS float64      `json:"cores_per_rps"`
	N      int          `json:"trials"`
	R2     float64      `json:"r2"`
}

// At is the fitted cores at a rate.
func (f RoleFit) At(rate float64) float64 { return f.Idle + f.PerRPS*rate }

// roleOrder is the order components appear in a report.
var roleOrder = []metrics.Role{metrics.RoleApp, metrics.RoleSidecar, metrics.RoleNodeProxy, metrics.RoleWaypoint,
	metrics.RoleIngress, metrics.RoleControlPlane, metrics.RoleCNI, metrics.RoleLoad}

// SystemCores is the fitted cores of everything but the load generators at
// a rate: what serving that rate costs.
func (c *CapacityMesh) SystemCores(rate float64) float64 {
	var sum float64
	for _, f := range c.Fits {
		if f.Role != metrics.RoleLoad {
			sum += f.At(rate)
		}
	}
	return sum
}

// loadCapacities reads every capacity entry's trial cells for their
// usage and fits each role's CPU against the rate.
func loadCapacities(dir string, ix *results.Index) []*CapacityMesh {
	var out []*CapacityMesh
	for _, c := range ix.Capacity {
		c.Result = reestimate(c)
		cm := &CapacityMesh{Capacity: c}
		var mem []float64
		for _, t := range c.Trials {
			if t.Verdict == search.Inconclusive {
				continue
			}
			cell, err := readCell(dir, results.Summary{ID: t.ID, File: t.File})
			if err != nil {
				cm.Unread = append(cm.Unread, fmt.Sprintf("%s: %v", t.File, err))
				continue
			}
			if len(cell.Resources) == 0 {
				continue
			}
			u := TrialUsage{Rate: t.Achieved, Cores: map[metrics.Role]float64{}}
			for _, s := range cell.Resources {
				u.Cores[s.Component.Role] += s.MeanCPU()
				if s.Component.Role != metrics.RoleLoad {
					u.MemBytes += s.MeanMemory()
				}
			}
			cm.Usage = append(cm.Usage, u)
			mem = append(mem, u.MemBytes)
		}
		if len(mem) > 0 {
			cm.MemoryGB = mean(mem) / (1 << 30)
		}
		cm.Fits = fitRoles(cm.Usage)
		out = append(out, cm)
	}
	return out
}

// reestimate is a finished search's estimate and interval computed from
// its stored trials by this meshbench's method, not the run's, so that a
// report of an older run, or of one whose study.json was edited, shows
// what its trials say. A search that did not finish, or one stored without
// its configuration (before schema 17), is kept as stored.
func reestimate(c results.Capacity) search.Result {
	if c.Status != results.StatusOK || c.Config == nil {
		return c.Result
	}
	r := c.Result
	r.Trials = make([]search.Trial, len(c.Trials))
	for i, t := range c.Trials {
		r.Trials[i] = t.Trial
	}
	return search.Reestimate(r)
}

func fitRoles(usage []TrialUsage) []RoleFit {
	roles := map[metrics.Role]bool{}
	for _, u := range usage {
		for r := range u.Cores {
			roles[r] = true
		}
	}
	order := slices.Clone(roleOrder)
	for _, r := range slices.Sorted(maps.Keys(roles)) {
		if !slices.Contains(order, r) {
			order = append(order, r)
		}
	}
	var out []RoleFit
	for _, r := range order {
		if !roles[r] {
			continue
		}
		var xs, ys []float64
		for _, u := range usage {
			xs, ys = append(xs, u.Rate), append(ys, u.Cores[r])
		}
		f := linearFit(xs, ys)
		f.Role = r
		out = append(out, f)
	}
	return out
}

// linearFit fits y = a + b x by least squares.
func linearFit(xs, ys []float64) RoleFit {
	n := float64(len(xs))
	f := RoleFit{N: len(xs)}
	if len(xs) == 0 {
		return f
	}
	mx, my := mean(xs), mean(ys)
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if len(xs) < 2 || sxx == 0 || n < 2 {
		f.Idle = my
		return f
	}
	f.PerRPS = sxy / sxx
	f.Idle = my - f.PerRPS*mx
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	return f
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
