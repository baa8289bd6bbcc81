package cost

import (
	"fmt"
	"sort"

	"github.com/meshbench/meshbench/internal/metrics"
)

// ComponentUsage is the measured consumption of every instance of one role
// in a run.
type ComponentUsage struct {
	Role metrics.Role `json:"role"`
	// Instances is how many containers were measured.
	Instances int `json:"instances"`
	// CPUCores and MemoryBytes are the instances' means over the
	// measurement window, summed.
	CPUCores    float64 `json:"cpu_cores"`
	MemoryBytes float64 `json:"memory_bytes"`
}

// Usage is what one mesh consumed in one run, as plain data that a runner
// or a report fills in from its results.
type Usage struct {
	Mesh string `json:"mesh"`
	// RequestRate is the achieved rate the CPU is divided by, in requests
	// per second.
	RequestRate float64 `json:"request_rate_rps"`
	// Nodes is how many nodes carried the run's per-node components.
	Nodes      int              `json:"nodes,omitempty"`
	Components []ComponentUsage `json:"components"`
}

// UsageFromSeries sums measured series by role: the mean CPU and memory of
// each series, added up.
func UsageFromSeries(mesh string, requestRate float64, nodes int, series []metrics.Series) Usage {
	byRole := map[metrics.Role]*ComponentUsage{}
	for _, s := range series {
		c := byRole[s.Component.Role]
		if c == nil {
			c = &ComponentUsage{Role: s.Component.Role}
			byRole[s.Component.Role] = c
		}
		c.Instances++
		c.CPUCores += s.MeanCPU()
		c.MemoryBytes += s.MeanMemory()
	}
	u := Usage{Mesh: mesh, RequestRate: requestRate, Nodes: nodes}
	for _, c := range byRole {
		u.Components = append(u.Components, *c)
	}
	sort.Slice(u.Components, func(i, j int) bool { return u.Components[i].Role < u.Components[j].Role })
	return u
}

// Projection is a user's own cluster to scale a run's consumption to. A
// zero RequestRate keeps the measured CPU; zero Nodes keeps the measured
// node-proxy memory.
type Projection struct {
	RequestRate float64 `json:"request_rate_rps"`
	Nodes       int     `json:"nodes"`
}

// ConsumptionRow is one mesh's data plane priced at measured consumption.
type ConsumptionRow struct {
	Mesh        string  `json:"mesh"`
	CPUCores    float64 `json:"cpu_cores"`
	MemoryGB    float64 `json:"memory_gb"`
	MonthlyCost float64 `json:"monthly_cost"`
	// CPUPer1000RPS is data-plane cores per 1000 requests a second at the
	// run's rate: all its CPU, idle included, over the rate. An average at
	// that rate, not a marginal cost: at low rates idle CPU dominates it.
	CPUPer1000RPS float64 `json:"cpu_per_1000_rps,omitempty"`
	// Projected is the same data plane at the projection's rate and nodes.
	Projected *Consumed `json:"projected,omitempty"`
	// ProjectedFrom is the fit a results directory's projection to a
	// rate read the CPU from; nil when the CPU was not projected by one.
	ProjectedFrom *CPUFit `json:"projected_from,omitempty"`
	// ControlPlane is the mesh's control plane at its measured usage,
	// priced alike but apart from the data plane and never projected: it
	// follows the mesh's configuration, not its traffic. Nil when none was
	// measured.
	ControlPlane *Consumed `json:"control_plane,omitempty"`
}

// CPUFit is a data plane's CPU split into an idle part and a part per
// request a second, fitted over its capacity search's trials (the
// report's split), and the range it was measured over.
type CPUFit struct {
	IdleCores   float64 `json:"idle_cores"`
	CoresPerRPS float64 `json:"cores_per_rps"`
	// Trials is how many trials the fit is over; R2 the worst of its
	// roles' fits.
	Trials int     `json:"trials"`
	R2     float64 `json:"r2"`
	// CapacityRPS is the mesh's measured capacity, where the measured
	// range ends; Extrapolated says the projection went beyond it.
	CapacityRPS  float64 `json:"capacity_rps"`
	Extrapolated bool    `json:"extrapolated"`
}

// At is the fitted cores at a rate.
func (f CPUFit) At(rate float64) float64 { return f.IdleCores + f.CoresPerRPS*rate }

// Consumed is an amount of CPU and memory and its monthly price.
type Consumed struct {
	CPUCores    float64 `json:"cpu_cores"`
	MemoryGB    float64 `json:"memory_gb"`
	MonthlyCost float64 `json:"monthly_cost"`
}

// Consumption prices each run's data plane (sidecars, node proxies and
// waypoints) at the unit prices, and its control plane apart. With a projection, CPU scales with the
// request rate (all of it, idle CPU included, which overstates a
// projection from a lightly loaded run); node-proxy memory scales with the node count; sidecar and
// waypoint memory, which follows pods rather than load, stays as measured.
func Consumption(usages []Usage, p UnitPrices, proj *Projection) ([]ConsumptionRow, error) {
	var rows []ConsumptionRow
	for _, u := range usages {
		var cores, bytes, nodeBytes float64
		var cp *Consumed
		for _, c := range u.Components {
			if c.Role == metrics.RoleControlPlane {
				p := p.price(c.CPUCores, c.MemoryBytes/float64(GiB))
				cp = &p
			}
			if !c.Role.DataPlane() {
				continue
			}
			cores += c.CPUCores
			bytes += c.MemoryBytes
			if c.Role == metrics.RoleNodeProxy {
				nodeBytes += c.MemoryBytes
			}
		}
		gb := bytes / float64(GiB)
		c := p.price(cores, gb)
		row := ConsumptionRow{Mesh: u.Mesh, CPUCores: cores, MemoryGB: gb, MonthlyCost: c.MonthlyCost, ControlPlane: cp}
		if u.RequestRate > 0 {
			row.CPUPer1000RPS = cores / (u.RequestRate / 1000)
		}
		if proj != nil {
			projCores, projBytes := cores, bytes
			if proj.RequestRate > 0 {
				if u.RequestRate <= 0 {
					return nil, fmt.Errorf("mesh %s: projecting needs the run's request_rate_rps", u.Mesh)
				}
				projCores = row.CPUPer1000RPS * proj.RequestRate / 1000
			}
			if proj.Nodes > 0 && nodeBytes > 0 {
				if u.Nodes <= 0 {
					return nil, fmt.Errorf("mesh %s: projecting node-proxy memory needs the run's nodes", u.Mesh)
				}
				projBytes += nodeBytes/float64(u.Nodes)*float64(proj.Nodes) - nodeBytes
			}
			pc := p.price(projCores, projBytes/float64(GiB))
			row.Projected = &pc
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// ConsumptionEstimate is a consumption pricing with its unit prices.
type ConsumptionEstimate struct {
	Prices     UnitPrices       `json:"prices"`
	Projection *Projection      `json:"projection,omitempty"`
	Rows       []ConsumptionRow `json:"rows"`
}

// EstimateConsumption reads the usage file and prices it.
func EstimateConsumption(o Options, catalog *Catalog) (*ConsumptionEstimate, error) {
	var usages []Usage
	if err := readYAML(o.UsageFile, &usages); err != nil {
		return nil, err
	}
	prices, err := unitPrices(o, catalog)
	if err != nil {
		return nil, err
	}
	e := &ConsumptionEstimate{Prices: prices}
	if o.ProjectRPS > 0 || o.ProjectNodes > 0 {
		e.Projection = &Projection{RequestRate: o.ProjectRPS, Nodes: o.ProjectNodes}
	}
	e.Rows, err = Consumption(usages, prices, e.Projection)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.UsageFile, err)
	}
	return e, nil
}
