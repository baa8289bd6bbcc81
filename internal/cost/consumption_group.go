package cost

import (
	"maps"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
)

// GroupConsumption prices the data plane of each of the group's usable
// repetitions, in repetition order. Both `meshbench cost --results` and
// the report price consumption with it: a mesh's figure is the mean of
// its repetitions' (with an interval in the report), for a bill is paid
// on mean use, so that the data plane's CPU, memory and price come from
// the same runs.
func GroupConsumption(g *analysis.Group, p UnitPrices, proj *Projection) ([]ConsumptionRow, error) {
	var usages []Usage
	for _, r := range g.Reps {
		usages = append(usages, repUsage(g.Mesh, r))
	}
	return Consumption(usages, p, proj)
}

// repUsage is one repetition's usage per role: each role's summed mean CPU
// and memory over the measured window, at the completed requests a second
// over the same window. Nodes counts the nodes that ran a node proxy,
// whose memory a projection scales per node.
func repUsage(mesh string, r *analysis.Rep) Usage {
	u := Usage{Mesh: mesh, RequestRate: r.Values[analysis.QPS]}
	roles := map[metrics.Role]bool{}
	nodes := map[string]bool{}
	for _, c := range r.Components {
		roles[c.Role] = true
		if c.Role == metrics.RoleNodeProxy {
			nodes[c.Node] = true
		}
	}
	u.Nodes = len(nodes)
	for _, role := range slices.Sorted(maps.Keys(roles)) {
		p := analysis.RolePart(role)
		u.Components = append(u.Components, ComponentUsage{
			Role: role, Instances: r.Alloc[p].Components, CPUCores: r.Values[analysis.CPU(p)], MemoryBytes: r.Values[analysis.Memory(p)],
		})
	}
	return u
}

// meanRow is each figure's mean over the repetitions' rows.
func meanRow(rows []ConsumptionRow) ConsumptionRow {
	mean := func(f func(ConsumptionRow) float64) float64 {
		var xs []float64
		for _, r := range rows {
			xs = append(xs, f(r))
		}
		return analysis.MeanCI(xs).Median
	}
	out := ConsumptionRow{
		Mesh:          rows[0].Mesh,
		CPUCores:      mean(func(r ConsumptionRow) float64 { return r.CPUCores }),
		MemoryGB:      mean(func(r ConsumptionRow) float64 { return r.MemoryGB }),
		MonthlyCost:   mean(func(r ConsumptionRow) float64 { return r.MonthlyCost }),
		CPUPer1000RPS: mean(func(r ConsumptionRow) float64 { return r.CPUPer1000RPS }),
	}
	// The control plane over the repetitions that measured it.
	var cp []Consumed
	for _, r := range rows {
		if r.ControlPlane != nil {
			cp = append(cp, *r.ControlPlane)
		}
	}
	if len(cp) > 0 {
		of := func(f func(Consumed) float64) float64 {
			var xs []float64
			for _, c := range cp {
				xs = append(xs, f(c))
			}
			return analysis.MeanCI(xs).Median
		}
		out.ControlPlane = &Consumed{
			CPUCores:    of(func(c Consumed) float64 { return c.CPUCores }),
			MemoryGB:    of(func(c Consumed) float64 { return c.MemoryGB }),
			MonthlyCost: of(func(c Consumed) float64 { return c.MonthlyCost }),
		}
	}
	if rows[0].Projected != nil {
		out.Projected = &Consumed{
			CPUCores:    mean(func(r ConsumptionRow) float64 { return r.Projected.CPUCores }),
			MemoryGB:    mean(func(r ConsumptionRow) float64 { return r.Projected.MemoryGB }),
			MonthlyCost: mean(func(r ConsumptionRow) float64 { return r.Projected.MonthlyCost }),
		}
	}
	return out
}
