package report

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report/chart"
	"github.com/meshbench/meshbench/internal/results"
)

// compareMetrics are the figures a comparison tracks.
var compareMetrics = []analysis.Metric{
	analysis.P50, analysis.P90, analysis.P99, analysis.P999, analysis.QPS, analysis.ErrorPct,
	analysis.CPU(analysis.PartDataPlane), analysis.CPUPerRequest, analysis.Memory(analysis.PartDataPlane),
	analysis.CPU("app"), analysis.CPU("load"),
}

func generateComparison(ctx context.Context, o Options, log *slog.Logger) ([]string, error) {
	var ds [2]*analysis.Dataset
	for i, dir := range o.Dirs {
		d, err := analysis.Load(dir, analysis.Options{Baseline: o.Baseline, Logger: log})
		if err != nil {
			return nil, err
		}
		ds[i] = d
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	c := analysis.Compare(ds[0], ds[1], compareMetrics)
	doc := BuildComparison(c)
	regressed := func(err error) error {
		regs := c.Regressions()
		if err != nil || !o.FailOnRegression || len(regs) == 0 {
			return err
		}
		var l []string
		for _, ch := range regs[:min(len(regs), 3)] {
			l = append(l, fmt.Sprintf("%s %s at %s %s%%", ch.Mesh, ch.Metric.Label(), ch.Config.Label(), signed(ch.Diff.Pct.Median)))
		}
		if len(regs) > 3 {
			l = append(l, fmt.Sprintf("and %d more", len(regs)-3))
		}
		return fmt.Errorf("%s regressed against %s (p50, p99 or data-plane CPU per request worse beyond its 95%% interval by at least %g%%): %s: %w",
			o.Dirs[1], o.Dirs[0], analysis.RegressionMinPct, strings.Join(l, "; "), ErrRegression)
	}
	if o.Print != "" {
		return nil, regressed(printDocument(o, doc))
	}
	out := cmp.Or(o.Out, o.Dirs[1])
	var written []string
	err := writeDocument(doc, []string{FormatHTML, FormatMarkdown}, func(name string, data []byte) error {
		switch name {
		case HTMLFile:
			name = CompareHTMLFile
		case MarkdownFile:
			name = CompareMDFile
		}
		p := filepath.Join(out, name)
		if err := results.WriteFile(out, name, data); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
		written = append(written, p)
		return nil
	})
	if err != nil {
		return written, err
	}
	return written, regressed(nil)
}

func changeVerdict(ch analysis.Change) string {
	switch {
	case ch.IsRegression():
		return "REGRESSED"
	case ch.Regressed():
		return "worse"
	case ch.Improved():
		return "improved"
	}
	return verdictText(ch.Diff)
}

// BuildComparison turns a comparison into a document: what regressed,
// every figure's change with its interval, and what differs between the
// two runs' set-ups.
func BuildComparison(c *analysis.Comparison) *Document {
	a, b := c.A, c.B
	doc := &Document{
		Title:    "meshbench comparison: " + b.Index.Study,
		Subtitle: fmt.Sprintf("A: %s (run %s); B: %s (run %s). Changes are B minus A.", a.Dir, a.Index.Start.UTC().Format("2006-01-02 15:04"), b.Dir, b.Index.Start.UTC().Format("2006-01-02 15:04")),
	}
	counts := map[string]int{}
	reg := &Table{Header: []string{"Mesh", "Configuration", "Figure", "A", "B", "B − A", "Verdict"}}
	for _, ch := range c.Changes {
		counts[changeVerdict(ch)]++
	}
	for _, ch := range c.Regressions() {
		reg.Rows = append(reg.Rows, changeRow(ch, true))
	}
	sum := Section{ID: "summary", Title: "Summary"}
	sum.Blocks = append(sum.Blocks, text(fmt.Sprintf("%d figures compared: %d regressed, %d otherwise worse, %d improved, %d show no measurable difference, %d have too few runs to tell. "+
		"A change counts only when the 95%% bootstrap interval of the difference of medians excludes zero; "+
		"even then about one in twenty unchanged figures crosses zero by chance, so look for changes that agree across configurations. "+
		"Regressed (what --fail-on-regression gates on) is p50, p99 or data-plane CPU per request worse by at least %g%%; worse is any other measurably worse figure.",
		len(c.Changes), counts["REGRESSED"], counts["worse"], counts["improved"], counts["no measurable difference"], counts["too few runs to tell"], analysis.RegressionMinPct)))
	for _, w := range setupDifferences(a.Index, b.Index) {
		sum.Blocks = append(sum.Blocks, text("Set-up differs: "+w))
	}
	if len(reg.Rows) > 0 {
		sum.Blocks = append(sum.Blocks, heading("Regressions"), table(reg))
	}
	if len(c.OnlyA)+len(c.OnlyB) > 0 {
		var l []string
		for _, g := range c.OnlyA {
			l = append(l, "only in A: "+g)
		}
		for _, g := range c.OnlyB {
			l = append(l, "only in B: "+g)
		}
		sum.Blocks = append(sum.Blocks, heading("Groups not in both runs"), Block{List: l})
	}
	all := Section{ID: "changes", Title: "Every figure"}
	for _, cfg := range b.Configs {
		t := &Table{Header: []string{"Mesh", "Figure", "A", "B", "B − A", "Verdict"}}
		for _, ch := range c.Changes {
			if ch.Config.Key == cfg.Key {
				t.Rows = append(t.Rows, changeRow(ch, false))
			}
		}
		if len(t.Rows) > 0 {
			all.Blocks = append(all.Blocks, heading(cfg.Label()), table(t))
		}
	}
	charts := Section{ID: "charts", Title: "Latency changes"}
	for _, m := range []analysis.Metric{analysis.P50, analysis.P99} {
		charts.Blocks = append(charts.Blocks, chartBlock(compareChart(c, m)))
	}
	doc.Sections = []Section{sum, charts, all}
	return doc
}

func changeRow(ch analysis.Change, withConfig bool) []string {
	scale, u := unit(ch.Metric)
	row := []string{ch.Mesh}
	if withConfig {
		row = append(row, ch.Config.Label())
	}
	return append(row, ch.Metric.Label(), est(ch.Diff.Base, scale), est(ch.Diff.Other, scale),
		diffText(ch.Diff, scale, u), changeVerdict(ch))
}

func compareChart(c *analysis.Comparison, m analysis.Metric) *Chart {
	var cats []string
	for _, cfg := range c.B.Configs {
		cats = append(cats, short(cfg, c.B.Params))
	}
	var series []chart.BarSeries
	for i, mesh := range c.B.Meshes {
		bs := chart.BarSeries{Name: mesh, Colour: chart.Colour(i)}
		for _, cfg := range c.B.Configs {
			bar := chart.Bar{V: nan}
			for _, ch := range c.Changes {
				if ch.Mesh == mesh && ch.Config.Key == cfg.Key && ch.Metric == m && ch.Diff.Pct.Valid() {
					bar = chart.Bar{V: ch.Diff.Pct.Median, Lo: ch.Diff.Pct.Lo, Hi: ch.Diff.Pct.Hi}
				}
			}
			bs.Bars = append(bs.Bars, bar)
		}
		series = append(series, bs)
	}
	title := fmt.Sprintf("%s change, B against A", m)
	return &Chart{
		File: "compare-" + slug(string(m)), Title: title,
		Caption: "Percent change of the median, whiskers the 95% interval; a whisker across zero is no measurable change.",
		SVG: chart.Bars{Title: title, X: shortAxis(c.B.Params), Y: chart.Axis{Label: "change (%)"},
			Categories: cats, Series: series}.SVG(),
	}
}

// setupDifferences lists what differs between the two runs' recorded
// set-ups, each of which may explain a change.
func setupDifferences(a, b *results.Index) []string {
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %q in A, %q in B", what, x, y))
		}
	}
	diff("study file hash", a.StudyHash, b.StudyHash)
	pa, pb := a.Provenance, b.Provenance
	diff("meshbench version", pa.MeshbenchVersion, pb.MeshbenchVersion)
	diff("platform", pa.Platform.Name, pb.Platform.Name)
	diff("kernel", pa.Platform.Kernel, pb.Platform.Kernel)
	diff("CPU model", pa.Platform.CPUModel, pb.Platform.CPUModel)
	diff("Envoy version", pa.Platform.EnvoyVersion, pb.Platform.EnvoyVersion)
	keys := slices.Sorted(maps.Keys(pa.Platform.Versions))
	for _, k := range slices.Sorted(maps.Keys(pb.Platform.Versions)) {
		if _, ok := pa.Platform.Versions[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		diff(k+" version", pa.Platform.Versions[k], pb.Platform.Versions[k])
	}
	return out
}
