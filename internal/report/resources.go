package report

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// componentParts are the rows of the resource tables: the study's
// components (app, data plane, load generator, ingress), the data plane
// split by kind, and the mesh's other pieces.
var componentParts = []analysis.Part{
	analysis.RolePart(metrics.RoleApp),
	analysis.PartDataPlane,
	analysis.RolePart(metrics.RoleSidecar),
	analysis.RolePart(metrics.RoleNodeProxy),
	analysis.RolePart(metrics.RoleWaypoint),
	analysis.RolePart(metrics.RoleLoad),
	analysis.RolePart(metrics.RoleIngress),
	analysis.RolePart(metrics.RoleControlPlane),
	analysis.RolePart(metrics.RoleCNI),
}

// timeParts are the lines of the usage-over-time charts.
var timeParts = []analysis.Part{
	analysis.RolePart(metrics.RoleApp),
	analysis.PartDataPlane,
	analysis.RolePart(metrics.RoleLoad),
	analysis.RolePart(metrics.RoleIngress),
	analysis.RolePart(metrics.RoleControlPlane),
}

func partLabel(p analysis.Part) string {
	switch p {
	case analysis.RolePart(metrics.RoleSidecar), analysis.RolePart(metrics.RoleNodeProxy), analysis.RolePart(metrics.RoleWaypoint):
		return "data plane: " + p.Label()
	}
	return p.Label()
}

// resources is the resource usage per component per mesh, in full at the
// representative configuration and folded at the others, and each mesh's
// CPU and memory over time.
func (b *builder) resources() Section {
	s := Section{ID: "resources", Title: "Resource usage per component"}
	d := b.d
	rep := d.Representative()
	if !b.anyResources() {
		return s
	}
	s.Blocks = append(s.Blocks, text(intervalNote+
		" CPU is the mean over the measured window in cores and memory the mean working set in MiB, each summed over a component's containers."))
	if gaps, runs := b.gaps(); gaps > 0 {
		s.Blocks = append(s.Blocks, text(fmt.Sprintf("%s without a resource reading in %s (a missed scrape, a metrics source down): the means leave them out; they are not zeros. Each series' gaps are in its cell file.", plural(gaps, "span", "spans"), plural(runs, "run", "runs"))))
	}
	for _, c := range append([]analysis.LoadConfig{rep}, d.Configs[:len(d.Configs)-1]...) {
		for _, res := range []struct {
			name   string
			metric func(analysis.Part) analysis.Metric
			scale  float64
		}{{"CPU (cores)", analysis.CPU, 1}, {"Memory (MiB)", analysis.Memory, 1.0 / (1 << 20)}} {
			t := &Table{Header: append([]string{"Component"}, d.Meshes...)}
			for _, p := range b.tableParts() {
				row := []string{partLabel(p)}
				seen := false
				for _, m := range d.Meshes {
					g := d.Group(m, c)
					cell := "—"
					if g != nil {
						if e := g.Estimate(res.metric(p)); e.Valid() {
							cell, seen = est(e, res.scale), true
						}
					}
					row = append(row, cell)
				}
				if seen {
					t.Rows = append(t.Rows, row)
				}
			}
			h := fmt.Sprintf("%s at %s", res.name, c.Label())
			if c.Key == rep.Key {
				s.Blocks = append(s.Blocks, heading(h), table(t))
			} else {
				s.Blocks = append(s.Blocks, folded(h, t))
			}
		}
	}
	for _, m := range d.Meshes {
		g := d.Group(m, rep)
		if g == nil || g.Representative() == nil {
			continue
		}
		r := g.Representative()
		for _, res := range []struct {
			file, name, unit string
			value            func(analysis.UsagePoint) float64
		}{
			{"cpu", "CPU", "cores", func(u analysis.UsagePoint) float64 { return u.CPU }},
			{"memory", "Memory", "MiB", func(u analysis.UsagePoint) float64 { return u.Mem / (1 << 20) }},
		} {
			var series []chart.Series
			for i, p := range timeParts {
				var pts []chart.Point
				for _, u := range r.Usage[p] {
					pts = append(pts, chart.Point{X: u.T, Y: res.value(u)})
				}
				if len(pts) > 0 {
					series = append(series, chart.Series{Name: p.Label(), Colour: chart.Colour(i), Points: pts})
				}
			}
			if len(series) == 0 {
				continue
			}
			title := fmt.Sprintf("%s over time, %s", res.name, m)
			s.Blocks = append(s.Blocks, chartBlock(&Chart{
				File: res.file + "-over-time-" + slug(m), Title: title,
				Caption: fmt.Sprintf("Repetition %d (the run with the median p50) at %s; each line sums a component's containers.", r.Summary.Repetition, rep.Label()),
				SVG: chart.Line{
					Title: title, X: chart.Axis{Label: "seconds into the measured phase"},
					Y: chart.Axis{Label: res.name + " (" + res.unit + ")"}, Series: series,
				}.SVG(),
			}))
		}
	}
	return s
}

func (b *builder) anyResources() bool {
	for _, m := range b.d.Meshes {
		for _, p := range componentParts {
			if b.d.HasPart(m, p) {
				return true
			}
		}
	}
	return false
}

// tableParts are the rows of the resource tables: the data plane is split
// into sidecars, node proxies and waypoints only when some mesh has more
// than one of them, since otherwise each split row repeats the total.
func (b *builder) tableParts() []analysis.Part {
	split := false
	for _, m := range b.d.Meshes {
		n := 0
		for _, r := range []metrics.Role{metrics.RoleSidecar, metrics.RoleNodeProxy, metrics.RoleWaypoint} {
			if b.d.HasPart(m, analysis.RolePart(r)) {
				n++
			}
		}
		split = split || n > 1
	}
	var out []analysis.Part
	for _, p := range componentParts {
		if !split && metrics.Role(p).DataPlane() {
			continue
		}
		out = append(out, p)
	}
	return out
}

// gaps counts the spans without readings over every usable run, and the
// runs that have any.
func (b *builder) gaps() (gaps, runs int) {
	for _, m := range b.d.Meshes {
		for _, c := range b.d.Configs {
			g := b.d.Group(m, c)
			if g == nil {
				continue
			}
			for _, r := range g.Reps {
				if r.Gaps > 0 {
					gaps += r.Gaps
					runs++
				}
			}
		}
	}
	return gaps, runs
}
