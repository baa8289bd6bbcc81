package report

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// allocationParts are the components compared with what they asked for.
var allocationParts = []analysis.Part{
	analysis.RolePart(metrics.RoleApp),
	analysis.RolePart(metrics.RoleSidecar),
	analysis.RolePart(metrics.RoleNodeProxy),
	analysis.RolePart(metrics.RoleWaypoint),
	analysis.RolePart(metrics.RoleIngress),
	analysis.RolePart(metrics.RoleControlPlane),
	analysis.RolePart(metrics.RoleCNI),
}

// allocation is the Online Boutique study's consumption against
// allocation: measured usage beside the summed requests and limits, per
// mesh and component, at the representative configuration.
func (b *builder) allocation() Section {
	s := Section{ID: "allocation", Title: "Consumption against allocation"}
	d := b.d
	rep := d.Representative()
	t := &Table{Header: []string{"Mesh", "Component", "CPU used (cores)", "CPU requested (cores)", "CPU limit (cores)", "CPU used / requested",
		"Memory used (MiB)", "Memory requested (MiB)", "Memory limit (MiB)", "Memory used / requested"}}
	type bar struct {
		cat string
		use [2]analysis.Estimate
		req [2]float64
	}
	var bars []bar
	for _, m := range d.Meshes {
		g := d.Group(m, rep)
		if g == nil {
			continue
		}
		for _, p := range allocationParts {
			a, ok := g.Alloc(p)
			if !ok || a.WithRequest == 0 {
				continue
			}
			cpu, mem := g.Estimate(analysis.CPU(p)), g.Estimate(analysis.Memory(p))
			t.Rows = append(t.Rows, []string{
				m, fmt.Sprintf("%s (%d)", p.Label(), a.Components),
				est(cpu, 1), orDash(a.CPURequest, 1), orDash(a.CPULimit, 1), ratio(cpu.Median, a.CPURequest),
				est(mem, 1.0/(1<<20)), orDash(a.MemRequest, 1.0/(1<<20)), orDash(a.MemLimit, 1.0/(1<<20)), ratio(mem.Median, a.MemRequest),
			})
			if metrics.Role(p).DataPlane() {
				bars = append(bars, bar{cat: m + ": " + p.Label(), use: [2]analysis.Estimate{cpu, mem},
					req: [2]float64{a.CPURequest, a.MemRequest / (1 << 20)}})
			}
		}
	}
	if len(t.Rows) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks,
		text("At "+rep.Label()+". Requests and limits are summed over the component's containers (their count in brackets); "+
			"the allocation is what a scheduler reserves and a cost model pays for, the usage is what the containers used. Components without requests are left out."),
		table(t))
	if len(bars) == 0 {
		return s
	}
	for i, res := range []struct{ file, name, unit string }{{"cpu", "CPU", "cores"}, {"memory", "Memory", "MiB"}} {
		scale := 1.0
		if i == 1 {
			scale = 1.0 / (1 << 20)
		}
		used := chart.BarSeries{Name: "used (median, 95% interval)"}
		req := chart.BarSeries{Name: "requested"}
		var cats []string
		for _, x := range bars {
			cats = append(cats, x.cat)
			e := x.use[i]
			used.Bars = append(used.Bars, chart.Bar{V: e.Median * scale, Lo: e.Lo * scale, Hi: e.Hi * scale})
			req.Bars = append(req.Bars, chart.Bar{V: x.req[i]})
		}
		title := res.name + ": data plane consumption against allocation"
		s.Blocks = append(s.Blocks, chartBlock(&Chart{
			File: "allocation-" + res.file, Title: title,
			Caption: "Per mesh, the data plane's measured usage beside its summed requests; the limits are in the table.",
			SVG: chart.Bars{Title: title, X: "mesh: data plane", Y: chart.Axis{Label: res.name + " (" + res.unit + ")"},
				Categories: cats, Series: []chart.BarSeries{used, req}}.SVG(),
		}))
	}
	return s
}

func orDash(v, scale float64) string {
	if v == 0 {
		return "—"
	}
	return num(v * scale)
}

func ratio(used, alloc float64) string {
	if alloc == 0 || !(used >= 0) {
		return "—"
	}
	return num(100*used/alloc) + "%"
}
