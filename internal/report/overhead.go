package report

import (
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// overhead is the 50-tenant study's shape: per mesh, "adds X ms (p50) and
// Y ms (p95) over baseline", with intervals, at every configuration, and a
// bar chart of each.
func (b *builder) overhead() Section {
	s := Section{ID: "overhead", Title: "Overhead over baseline"}
	d := b.d
	if d.Baseline == "" || len(d.Meshes) < 2 {
		return s
	}
	s.Blocks = append(s.Blocks, text("Differences against "+d.Baseline+
		" measured in the same rounds, in ms and in percent of the baseline: the Hodges-Lehmann estimate over the units with Wilcoxon's signed-rank 95% interval; "+
		"a percentage only where the baseline's latency is at least "+num(MinPercentBaseMs)+" ms, since below that a small fixed cost reads as hundreds of percent of the loopback."))
	var closed []string
	for _, c := range d.Configs {
		if b.closedAt(c) {
			closed = append(closed, c.Label())
			continue
		}
		var lines []string
		for _, m := range d.Meshes[1:] {
			p50, ok := d.Overhead(m, c, analysis.P50)
			if !ok {
				continue
			}
			p95, _ := d.Overhead(m, c, analysis.P95)
			lines = append(lines, fmt.Sprintf("%s p50 %s; p95 %s.", sentence(m, p50, p95),
				diffText(p50, 1, "ms"), diffText(p95, 1, "ms")))
		}
		if len(lines) > 0 {
			s.Blocks = append(s.Blocks, heading(c.Label()), Block{List: lines})
		}
	}
	if len(closed) > 0 {
		s.Blocks = append(s.Blocks, text(fmt.Sprintf("No added latency at %s: a closed loop's latency is its connections over its throughput, so the Summary gives each mesh's throughput against %s's and its own p50 and p99 there.",
			strings.Join(closed, "; "), d.Baseline)))
	}
	if len(closed) == len(d.Configs) {
		s.Blocks = s.Blocks[len(s.Blocks)-1:] // only the sentence saying why there is none
		return s
	}
	for _, pm := range []analysis.Metric{analysis.P50, analysis.P95, analysis.P99} {
		s.Blocks = append(s.Blocks, chartBlock(b.overheadChart(pm)))
	}
	return s
}

// overheadChart draws an added latency at every open-loop configuration.
func (b *builder) overheadChart(pm analysis.Metric) *Chart {
	d := b.d
	var cats []string
	var open []analysis.LoadConfig
	for _, c := range d.Configs {
		if !b.closedAt(c) {
			cats, open = append(cats, short(c, d.Params)), append(open, c)
		}
	}
	var series []chart.BarSeries
	for _, m := range d.Meshes[1:] {
		bs := chart.BarSeries{Name: m, Colour: b.colour[m]}
		for _, c := range open {
			o, ok := d.Overhead(m, c, pm)
			if !ok || !o.Delta.Valid() {
				bs.Bars = append(bs.Bars, chart.Bar{V: nan})
				continue
			}
			bs.Bars = append(bs.Bars, chart.Bar{V: o.Delta.Median, Lo: o.Delta.Lo, Hi: o.Delta.Hi})
		}
		series = append(series, bs)
	}
	title := fmt.Sprintf("%s latency over baseline", pm)
	return &Chart{
		File: "overhead-" + slug(string(pm)), Title: title,
		Caption: "Bars are differences of medians, whiskers their 95% intervals; a whisker across zero means no measurable difference.",
		SVG: chart.Bars{
			Title: title, X: shortAxis(d.Params), Y: chart.Axis{Label: "added latency (ms)"},
			Categories: cats, Series: series,
		}.SVG(),
	}
}

// sentence is the 50-tenant study's verdict with the mesh's name: "mesh
// adds X ms (p50) and Y ms (p95) over baseline."
func sentence(mesh string, p50, p95 analysis.Diff) string {
	switch v := verdict(p50, p95); {
	case analysis.Judge(p50) == analysis.TooFewRuns || analysis.Judge(p95) == analysis.TooFewRuns:
		return mesh + ": " + v + "."
	case analysis.Judge(p50) == analysis.Censored && analysis.Judge(p95) == analysis.Censored:
		return mesh + ": " + v + "."
	case analysis.Judge(p50) == analysis.NoDifference && analysis.Judge(p95) == analysis.NoDifference:
		return mesh + ": " + v + " from baseline."
	default:
		return mesh + " " + v + " over baseline."
	}
}
