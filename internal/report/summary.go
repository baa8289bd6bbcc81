package report

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"
)

// summary is the verdict per mesh: what it adds to baseline latency at
// p50 and p95 with intervals, and its data plane's cost.
func (b *builder) summary() Section {
	s := Section{ID: "summary", Title: "Summary"}
	d := b.d
	open := false
	for _, c := range d.Configs {
		open = open || !b.closedAt(c)
	}
	intro := " Overheads are the differences against the baseline measured in the same rounds, with their signed-rank interval;" +
		" one whose interval includes zero is reported as no measurable difference, never as a win."
	if !open {
		intro = " Ratios to the baseline are paired by round, with their signed-rank interval."
	}
	s.Blocks = append(s.Blocks, text(intervalNote+intro))
	if d.Baseline == "" {
		s.Blocks = append(s.Blocks, text(fmt.Sprintf("The study has no %q mesh, so there are no overheads; the tables below compare the meshes side by side.", analysis.DefaultBaseline)))
		return s
	}
	t := &Table{Header: []string{"Mesh", shortAxis(d.Params), "p50 over baseline", "p95 over baseline", "Data plane CPU (cores)", "Data plane memory (MiB)", "Verdict"},
		Notes: []string{fmt.Sprintf("Overheads in ms with their 95%% intervals, and in percent of the baseline where the baseline's figure is at least %s ms "+
			"(below that the baseline is mostly the loopback and the kernel, and a percentage of it describes the lab, not the mesh); "+
			"see Overhead over baseline for the percentages' intervals.", num(MinPercentBaseMs))}}
	closed := &Table{Header: []string{"Mesh", shortAxis(d.Params), "Throughput (req/s)", "Throughput over baseline's", "p50 (ms)", "p99 (ms)", "Data plane CPU (cores)", "Data plane memory (MiB)"},
		Notes: []string{littleNote}}
	censored := false
	for _, m := range d.Meshes[1:] {
		for _, c := range d.Configs {
			g := d.Group(m, c)
			if g == nil {
				continue
			}
			if b.closedAt(c) {
				qps, ok := d.Overhead(m, c, analysis.QPS)
				if !ok {
					continue
				}
				p50, p99 := g.Estimate(analysis.P50), g.Estimate(analysis.P99)
				censored = censored || p50.Censored() || p99.Censored()
				closed.Rows = append(closed.Rows, []string{
					m, short(c, d.Params), est(g.Estimate(analysis.QPS), 1), ratioText(qps), est(p50, 1), est(p99, 1),
					est(g.Estimate(analysis.CPU(analysis.PartDataPlane)), 1),
					est(g.Estimate(analysis.Memory(analysis.PartDataPlane)), 1.0/(1<<20)),
				})
				continue
			}
			p50, ok := d.Overhead(m, c, analysis.P50)
			if !ok {
				continue
			}
			p95, _ := d.Overhead(m, c, analysis.P95)
			censored = censored || p50.Delta.Censored() || p95.Delta.Censored()
			t.Rows = append(t.Rows, []string{
				m, short(c, d.Params), diffShort(p50), diffShort(p95),
				est(g.Estimate(analysis.CPU(analysis.PartDataPlane)), 1),
				est(g.Estimate(analysis.Memory(analysis.PartDataPlane)), 1.0/(1<<20)),
				verdict(p50, p95),
			})
		}
	}
	for _, tb := range []*Table{t, closed} {
		if len(tb.Rows) == 0 {
			continue
		}
		if censored {
			tb.Notes = append(tb.Notes, censoredNote)
		}
		s.Blocks = append(s.Blocks, table(tb))
	}
	if n := len(d.Excluded); n > 0 {
		s.Blocks = append(s.Blocks, text(fmt.Sprintf("%s left out of every figure (distorted load, failed verification or no data); see Excluded cells.", plural(n, "cell was", "cells were"))))
	}
	return s
}

// verdict puts a mesh's p50 and p95 overheads into the 50-tenant
// study's words: "adds X ms (p50) and Y ms (p95)" over baseline.
func verdict(p50, p95 analysis.Diff) string {
	v50, v95 := analysis.Judge(p50), analysis.Judge(p95)
	switch {
	case v50 == analysis.TooFewRuns || v95 == analysis.TooFewRuns:
		return "too few runs to tell"
	case v50 == analysis.Censored && v95 == analysis.Censored:
		return "not measurable: censored by timeouts"
	case v50 == analysis.NoDifference && v95 == analysis.NoDifference:
		return "no measurable difference"
	}
	if v50 == analysis.Higher && v95 == analysis.Higher {
		return fmt.Sprintf("adds %s ms (p50) and %s ms (p95)", num(p50.Delta.Median), num(p95.Delta.Median))
	}
	return fmt.Sprintf("%s (p50) and %s (p95)", phrase(p50), phrase(p95))
}

// diffShort is a latency difference with its interval and the percentage
// without one, for the summary; the overhead section has the rest.
func diffShort(d analysis.Diff) string {
	dm, dl, dh := bounded(signed(d.Delta.Median), d.Delta.MedianBound), bounded(signed(d.Delta.Lo), d.Delta.LoBound), bounded(signed(d.Delta.Hi), d.Delta.HiBound)
	pm := bounded(signed(d.Pct.Median), d.Pct.MedianBound)
	if !percentMeaningful(d, "ms") {
		if !d.Delta.Interval() {
			return fmt.Sprintf("%s ms (too few runs)", dm)
		}
		return fmt.Sprintf("%s ms [%s, %s]%s", dm, dl, dh, levelText(d.Delta))
	}
	if !d.Delta.Interval() {
		return fmt.Sprintf("%s ms, %s%% (too few runs)", dm, pm)
	}
	return fmt.Sprintf("%s ms [%s, %s]%s (%s%%)", dm, dl, dh, levelText(d.Delta), pm)
}

// phrase says what one difference shows.
func phrase(d analysis.Diff) string {
	switch analysis.Judge(d) {
	case analysis.Higher:
		return "adds " + num(d.Delta.Median) + " ms"
	case analysis.Lower:
		return "is " + num(-d.Delta.Median) + " ms faster"
	case analysis.Censored:
		return "adds no measurable latency (censored by timeouts)"
	}
	return "adds no measurable latency"
}
