package report

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// replicaSweep is the bookinfo study's replica-sweep tables: the data
// plane's CPU and memory on the app nodes (a node proxy there against the
// sum of all sidecars) and the load generator's, per replica count, with
// the data plane's charted against the replica count.
func (b *builder) replicaSweep() Section {
	s := Section{ID: "replicas", Title: "Replica sweep"}
	d := b.d
	p, ok := d.ReplicaSweep()
	if !ok {
		return s
	}
	dp := analysis.PartDataPlaneAppNodes
	meshes := b.meshesWith(dp)
	if len(meshes) == 0 {
		dp = analysis.PartDataPlane // no node roles recorded: the whole data plane
		meshes = b.meshesWith(dp)
	}
	load := analysis.RolePart(metrics.RoleLoad)
	what := "The data plane on the app nodes: a node proxy there against the sum of the sidecars there."
	if dp == analysis.PartDataPlane {
		what = "The whole data plane (the results name no app nodes)."
	}
	s.Blocks = append(s.Blocks, text(fmt.Sprintf("%s CPU and memory per value of %s, and the load generator's. %s", what, p.Name, intervalNote)))
	for _, other := range d.Slices(p.Name) {
		where := ""
		if other.Key != "" {
			where = " at " + other.Label()
		}
		for _, res := range []struct {
			name   string
			metric analysis.Metric
			scale  float64
			part   analysis.Part
			folded bool
			ms     []string
		}{
			{"Data plane CPU (cores)", analysis.CPU(dp), 1, dp, false, meshes},
			{"Data plane memory (MiB)", analysis.Memory(dp), 1.0 / (1 << 20), dp, false, meshes},
			{"Load generator CPU (cores)", analysis.CPU(load), 1, load, true, d.Meshes},
			{"Load generator memory (MiB)", analysis.Memory(load), 1.0 / (1 << 20), load, true, d.Meshes},
		} {
			if len(res.ms) == 0 {
				continue
			}
			t := &Table{Header: append([]string{p.Name}, res.ms...)}
			for _, v := range p.Values {
				row := []string{v}
				for _, m := range res.ms {
					cell := "—"
					if g := d.Group(m, other.With(p.Name, v)); g != nil {
						cell = est(g.Estimate(res.metric), res.scale)
					}
					row = append(row, cell)
				}
				t.Rows = append(t.Rows, row)
			}
			if res.folded {
				s.Blocks = append(s.Blocks, folded(res.name+where, t))
			} else {
				s.Blocks = append(s.Blocks, heading(res.name+where), table(t))
			}
		}
		for _, res := range []struct {
			file, name string
			metric     analysis.Metric
			scale      float64
		}{{"cpu", "Data plane CPU (cores)", analysis.CPU(dp), 1}, {"memory", "Data plane memory (MiB)", analysis.Memory(dp), 1.0 / (1 << 20)}} {
			var series []chart.Series
			for _, m := range meshes {
				var pts []chart.Point
				for _, v := range p.Values {
					c := other.With(p.Name, v)
					g := d.Group(m, c)
					if g == nil {
						continue
					}
					x, _ := c.Value(p.Name)
					if e := g.Estimate(res.metric); e.Valid() {
						pts = append(pts, chart.Point{X: x, Y: e.Median * res.scale, Lo: e.Lo * res.scale, Hi: e.Hi * res.scale})
					}
				}
				series = append(series, chart.Series{Name: m, Colour: b.colour[m], Points: pts})
			}
			title := res.name + " against " + p.Name + where
			s.Blocks = append(s.Blocks, chartBlock(&Chart{
				File: "dataplane-" + res.file + "-vs-replicas-" + fileSlug(other), Title: title,
				Caption: dp.Label() + ": medians with 95% intervals as whiskers.",
				SVG: chart.Line{
					Title: title, X: valueAxis(p, chart.Linear), Y: chart.Axis{Label: res.name}, Series: series,
				}.SVG(),
			}))
		}
	}
	return s
}
