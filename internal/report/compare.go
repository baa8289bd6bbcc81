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
	analysis.CPU(analysis.PartDataPlane), analysis.CPUPerRequest, analysis.CPUPerAppCPU, analysis.Memory(analysis.PartDataPlane),
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
	spec := o.Gate
	if len(spec.Figures) == 0 {
		spec.Figures = analysis.DefaultGate
	}
	g := c.Gate(spec)
	incomparable := analysis.CheckComparable(ds[0], ds[1], o.Vary)
	if incomparable != nil && o.FailOnRegression {
		// Refused before anything is written: no comparison to misread.
		return nil, fmt.Errorf("compare %s %s: %w", o.Dirs[0], o.Dirs[1], incomparable)
	}
	doc := BuildComparison(c, g, incomparable)
	regressed := func(err error) error {
		if err != nil || !o.FailOnRegression || len(g.Regressions) == 0 {
			return err
		}
		var l []string
		for _, ch := range g.Regressions[:min(len(g.Regressions), 3)] {
			l = append(l, fmt.Sprintf("%s %s%% (p %.2g)", ch, bounded(signed(ch.Diff.Pct.Median), ch.Diff.Pct.MedianBound), ch.P))
		}
		if len(g.Regressions) > 3 {
			l = append(l, fmt.Sprintf("and %d more", len(g.Regressions)-3))
		}
		return fmt.Errorf("%s regressed against %s (%s): %s: %w",
			o.Dirs[1], o.Dirs[0], gateRule(g), strings.Join(l, "; "), ErrRegression)
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

// gateRule says what the gate decides on, for its messages.
func gateRule(g analysis.GateResult) string {
	return fmt.Sprintf("the gate's family of %d figures under Holm's procedure at a %.0f%% family-wise false-alarm rate, each worse by at least %g%%",
		g.Family, 100*analysis.GateAlpha, analysis.RegressionMinPct)
}

func changeVerdict(ch analysis.Change) string {
	switch {
	case ch.Regression:
		return "REGRESSED"
	case ch.Regressed():
		return "worse"
	case ch.Improved():
		return "improved"
	}
	return verdictText(ch.Diff)
}

// BuildComparison turns a comparison into a document: the gate's
// decision over its family, every figure's change with its interval, and
// what differs between the two runs' set-ups. incomparable, when not nil,
// says why the runs cannot be gated.
func BuildComparison(c *analysis.Comparison, g analysis.GateResult, incomparable error) *Document {
	a, b := c.A, c.B
	doc := &Document{
		Title:    "meshbench comparison: " + b.Index.Study,
		Subtitle: fmt.Sprintf("A: %s (run %s); B: %s (run %s). Changes are B minus A.", a.Dir, a.Index.Start.UTC().Format("2006-01-02 15:04"), b.Dir, b.Index.Start.UTC().Format("2006-01-02 15:04")),
	}
	counts := map[string]int{}
	for _, ch := range c.Changes {
		counts[changeVerdict(ch)]++
	}
	sum := Section{ID: "summary", Title: "Summary"}
	if incomparable != nil {
		sum.Blocks = append(sum.Blocks, text("Not comparable for the gate: "+incomparable.Error()+". No figure below is a regression; read the changes as the set-ups' difference."))
	}
	sum.Blocks = append(sum.Blocks, text(gateText(g, a, b)))
	sum.Blocks = append(sum.Blocks, text(fmt.Sprintf("%d figures compared: %d regressed, %d otherwise worse, %d improved, %d show no measurable difference, %d have too few runs to tell. "+
		"Each change is the Hodges-Lehmann shift between the two runs' units (%s), with the distribution-free interval of the Mann-Whitney statistic; "+
		"a change counts as measurable only when that interval reaches %.0f%% and excludes zero. Outside the gate's family, about one unchanged figure in twenty "+
		"crosses zero by chance: look for changes that agree across configurations.",
		len(c.Changes), counts["REGRESSED"], counts["worse"], counts["improved"], counts["no measurable difference"], counts["too few runs to tell"],
		unitsText(a, b), 100*analysis.Nominal)))
	for _, w := range setupDifferences(a.Index, b.Index) {
		sum.Blocks = append(sum.Blocks, text("Set-up differs: "+w))
	}
	gated := &Table{Header: []string{"Mesh", "Configuration", "Figure", "A", "B", "B − A", "p (B worse)", "Verdict"}}
	for _, ch := range c.Changes {
		if ch.Gated {
			r := changeRow(ch)
			gated.Rows = append(gated.Rows, []string{r[0], ch.Config.Label(), r[1], r[2], r[3], r[4], fmt.Sprintf("%.3g", ch.P), r[5]})
		}
	}
	if len(gated.Rows) > 0 {
		sum.Blocks = append(sum.Blocks, heading("The gate's family"), table(gated))
	}
	var closed []string
	for _, cfg := range b.Configs {
		if a.ClosedLoopAt(cfg) || b.ClosedLoopAt(cfg) {
			closed = append(closed, cfg.Label())
		}
	}
	if len(closed) > 0 {
		where := "at " + strings.Join(closed, "; ")
		if len(closed) == len(b.Configs) {
			where = "in these closed loops (connections without a rate)"
		}
		sum.Blocks = append(sum.Blocks, text("No added latency "+where+": a closed loop's latency is its connections over its throughput (Little's law), "+
			"so a latency added to the baseline's would only restate a loss of throughput. A closed loop compares each mesh's throughput (QPS, higher is better: a drop is a regression), "+
			"its CPU and its own p50 and p99 (which restate the throughput); in the gate's family each mesh's throughput stands in for its added p50 and p99."))
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
				t.Rows = append(t.Rows, changeRow(ch))
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

// gateText is the gate's decision in a sentence.
func gateText(g analysis.GateResult, a, b *analysis.Dataset) string {
	if g.Family == 0 {
		return "Regression gate: no figure of its family is in both runs, so it judges nothing."
	}
	s := fmt.Sprintf("Regression gate (what --fail-on-regression exits 3 on): %s. ", gateRule(g))
	switch {
	case !g.Reachable:
		s += fmt.Sprintf("With these runs' units the smallest p-value any figure can reach is %.3g, above Holm's first threshold of %.3g: the gate cannot fail whatever changed. Run more deployments on each side.",
			g.SmallestP, analysis.GateAlpha/float64(g.Family))
	case len(g.Regressions) == 0:
		s += "No regression."
	default:
		var l []string
		for _, ch := range g.Regressions {
			l = append(l, ch.String())
		}
		s += "REGRESSED: " + strings.Join(l, "; ") + "."
	}
	if a.Deployments() == 1 || b.Deployments() == 1 {
		s += " A run of one deployment shows only the variation between its rounds, not between runs: its side of each interval is too narrow, and the gate's false-alarm rate is not held."
	}
	return s
}

// unitsText says what the units of the two runs are.
func unitsText(a, b *analysis.Dataset) string {
	f := func(d *analysis.Dataset) string {
		if n := d.Deployments(); n > 1 {
			return fmt.Sprintf("%d deployments", n)
		}
		return "the rounds of one deployment"
	}
	return "A: " + f(a) + ", B: " + f(b)
}

// changeRow is a change's mesh, figure, both runs' estimates, the
// difference and the verdict.
func changeRow(ch analysis.Change) []string {
	scale, u := unit(ch.Metric)
	return []string{ch.Mesh, ch.Figure(), est(ch.Diff.Base, scale), est(ch.Diff.Other, scale), diffText(ch.Diff, scale, u), changeVerdict(ch)}
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
				if ch.Mesh == mesh && ch.Config.Key == cfg.Key && ch.Metric == m && !ch.Added && ch.Diff.Pct.Valid() {
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
