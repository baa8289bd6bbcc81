package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// latency is the bookinfo study's table, one per load configuration:
// Service mesh | Time | QPS | p50 | p90 | p99 | p99.9, with the latency
// spectrum of every mesh beside it.
func (b *builder) latency() Section {
	s := Section{ID: "latency", Title: "Latency and throughput per load configuration"}
	s.Blocks = append(s.Blocks, text(intervalNote+" Latencies in ms, read off each run's full histogram; Time is the measured phase in seconds; Completed counts the requests a second completed, errors included: at an open-loop rate that is the offered load, not a throughput."))
	for _, c := range b.d.Configs {
		s.Blocks = append(s.Blocks, heading(c.Label()))
		if lt := loadText(b.firstGroup(c)); lt != "" {
			s.Blocks = append(s.Blocks, text("Load: "+lt+"."))
		}
		t := &Table{Header: []string{"Service mesh", "Time (s)", "Completed (req/s)", "p50 (ms)", "p90 (ms)", "p99 (ms)", "p99.9 (ms)", "Errors (%)", "Runs"}}
		short, censored := false, false
		for _, m := range b.d.Meshes {
			g := b.d.Group(m, c)
			if g == nil {
				continue
			}
			row := []string{m}
			for _, metric := range []analysis.Metric{analysis.Duration, analysis.QPS, analysis.P50, analysis.P90, analysis.P99, analysis.P999, analysis.ErrorPct} {
				if len(g.Reps) > 0 && !g.Supports(metric) {
					row, short = append(row, tooFewMark), true
					continue
				}
				e := g.Estimate(metric)
				censored = censored || e.Censored()
				row = append(row, est(e, 1))
			}
			t.Rows = append(t.Rows, append(row, runs(g)))
		}
		if short {
			t.Notes = append(t.Notes, tooFewNote)
		}
		if censored {
			t.Notes = append(t.Notes, censoredNote)
		}
		s.Blocks = append(s.Blocks, table(t))
		if nt := b.perNamespace(c); nt != nil {
			s.Blocks = append(s.Blocks, text("Averaged per namespace: each namespace's generator's own percentiles, then their mean over the namespaces, as the 50-tenant study reported them; the table above pools every request."), table(nt))
		}
		if ch := b.spectrum(c); ch != nil {
			s.Blocks = append(s.Blocks, chartBlock(ch))
		}
	}
	return s
}

// tooFewMark stands in a table for a percentile the sample cannot hold,
// and tooFewNote is its footnote.
const (
	tooFewMark = "—¹"
	tooFewNote = "¹ Not shown: some usable run holds too few requests for this percentile. " +
		"A percentile is read only where at least 10 requests lie beyond it in every run, since its figure is the median of the runs' own percentiles: p99 needs 1,000 requests a run, p99.9 10,000."
)

// spectrum draws each mesh's latency at every percentile of the pooled
// histogram of its usable runs, on HdrHistogram's log percentile axis.
func (b *builder) spectrum(c analysis.LoadConfig) *Chart {
	var series []chart.Series
	for _, m := range b.d.Meshes {
		g := b.d.Group(m, c)
		if g == nil || g.Latency() == nil {
			continue
		}
		var pts []chart.Point
		n := float64(g.Requests())
		for _, p := range g.Latency().Spectrum() {
			if p.Percentile >= 100 {
				continue // at x = infinity on this axis
			}
			if n*(1-p.Percentile/100) < 10 {
				break // beyond what the sample holds, as in the table
			}
			pts = append(pts, chart.Point{X: 100 / (100 - p.Percentile), Y: float64(p.Value.Microseconds()) / 1000})
		}
		series = append(series, chart.Series{Name: m, Colour: b.colour[m], Points: pts})
	}
	if len(series) == 0 {
		return nil
	}
	end := spectrumMax(series)
	var ticks []chart.Tick
	for i, l := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"} {
		if v := math.Pow(10, float64(i)); v <= end*(1+1e-9) {
			ticks = append(ticks, chart.Tick{Value: v, Label: l})
		}
	}
	ticks[0].Value, ticks[0].Label = 2, "50%"
	title := "Latency by percentile, " + c.Label()
	return &Chart{
		File:  "latency-spectrum-" + fileSlug(c),
		Title: title,
		Caption: "Latency at each percentile of every request in the usable runs, pooled, up to the deepest percentile with at least 10 requests beyond it; both axes logarithmic. " +
			"The tail to the right is where meshes usually differ most.",
		SVG: chart.Line{
			Title:  title,
			X:      chart.Axis{Label: "percentile", Scale: chart.Log, Ticks: ticks, Min: 1.5, Max: end},
			Y:      chart.Axis{Label: "latency (ms)", Scale: chart.Log},
			Series: series,
		}.SVG(),
	}
}

// spectrumMax ends the percentile axis where the data end: at the
// deepest percentile any series reaches, and at least at 90%.
func spectrumMax(series []chart.Series) float64 {
	hi := 10.0
	for _, s := range series {
		for _, p := range s.Points {
			hi = math.Max(hi, p.X)
		}
	}
	return hi
}

// latencyVsLoad draws p50 and p99 against the swept load parameter, once
// per value of the other parameters.
func (b *builder) latencyVsLoad() Section {
	s := Section{ID: "latency-vs-load", Title: "Latency against load"}
	p, ok := b.d.LoadSweep()
	if !ok {
		return s
	}
	axis, against := valueAxis(p, chart.Log), p.Name
	at := func(c analysis.LoadConfig, _ string) (float64, bool) { return c.Value(p.Name) }
	if offered, ok := b.offeredRates(p); ok {
		// A rate sweep is drawn at the rate sent, as the text and tables
		// give it: the study's values scaled for the run, over every
		// generator.
		axis = offeredAxis(offered)
		at = func(_ analysis.LoadConfig, v string) (float64, bool) { x, ok := offered[v]; return x, ok }
		against = "the offered rate (" + p.Name + " scaled for the run, over every generator)"
	}
	s.Blocks = append(s.Blocks, text(fmt.Sprintf("p50 (solid) and p99 (dashed) against %s, medians with 95%% intervals as whiskers. "+
		"In a closed loop the latency at saturation is connections / throughput (Little's law): compare QPS too.", against)))
	for _, other := range b.d.Slices(p.Name) {
		var series []chart.Series
		for _, m := range b.d.Meshes {
			for _, pm := range []analysis.Metric{analysis.P50, analysis.P99} {
				var pts []chart.Point
				for _, v := range p.Values {
					c := other.With(p.Name, v)
					g := b.d.Group(m, c)
					x, ok := at(c, v)
					if g == nil || !ok {
						continue
					}
					if e := g.Estimate(pm); e.Valid() {
						pts = append(pts, chart.Point{X: x, Y: e.Median, Lo: e.Lo, Hi: e.Hi})
					}
				}
				if len(pts) > 0 {
					series = append(series, chart.Series{Name: m + " " + string(pm), Colour: b.colour[m], Dashed: pm == analysis.P99, Points: pts})
				}
			}
		}
		title := sliced("Latency against "+p.Name, other)
		s.Blocks = append(s.Blocks, chartBlock(&Chart{
			File: "latency-vs-load-" + fileSlug(other), Title: title,
			SVG: chart.Line{
				Title:  title,
				X:      axis,
				Y:      chart.Axis{Label: "latency (ms)", Scale: chart.Log},
				Series: series,
			}.SVG(),
		}))
	}
	return s
}

// offeredRates maps each value of a swept rate to the rate its cells
// offered in total (analysis.Offered); false unless p is a rate and every
// value's cells offered one alike.
func (b *builder) offeredRates(p analysis.Param) (map[string]float64, bool) {
	if last := p.Name[strings.LastIndex(p.Name, ".")+1:]; last != "rate" {
		return nil, false
	}
	out := map[string]float64{}
	for _, c := range b.d.Configs {
		v, ok := c.Params[p.Name]
		if !ok {
			continue
		}
		for _, m := range b.d.Meshes {
			g := b.d.Group(m, c)
			if g == nil {
				continue
			}
			for _, r := range g.Reps {
				x := r.Values[analysis.Offered]
				if prev, seen := out[v]; x <= 0 || (seen && prev != x) {
					return nil, false
				}
				out[v] = x
			}
		}
	}
	return out, len(out) == len(p.Values)
}

// offeredAxis is a log axis over offered rates with a tick at each.
func offeredAxis(offered map[string]float64) chart.Axis {
	a := chart.Axis{Label: analysis.Offered.Label(), Scale: chart.Log}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range offered {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	for _, x := range slices.Sorted(maps.Values(offered)) {
		if n := len(a.Ticks); n == 0 || a.Ticks[n-1].Value != x {
			a.Ticks = append(a.Ticks, chart.Tick{Value: x, Label: num(x)})
		}
	}
	a.Min, a.Max = lo/1.25, hi*1.25
	return a
}

// valueAxis is an axis over a swept parameter with a tick at each of its
// values and a little room either side.
func valueAxis(p analysis.Param, scale chart.Scale) chart.Axis {
	a := chart.Axis{Label: p.Name, Scale: scale}
	var lo, hi float64
	for i, v := range p.Values {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		a.Ticks = append(a.Ticks, chart.Tick{Value: x, Label: v})
		if i == 0 {
			lo, hi = x, x
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if scale == chart.Log {
		a.Min, a.Max = lo/1.25, hi*1.25
	} else {
		pad := (hi - lo) * 0.05
		a.Min, a.Max = lo-pad, hi+pad
	}
	return a
}

// fileSlug names a configuration's chart files.
func fileSlug(c analysis.LoadConfig) string {
	if s := slug(c.Key); s != "" {
		return s
	}
	return "all"
}

// perNamespace is the table of per-namespace latencies at a load
// configuration, or nil when no run had a generator per namespace.
func (b *builder) perNamespace(c analysis.LoadConfig) *Table {
	t := &Table{Header: []string{"Service mesh", "p50 (ms)", "p95 (ms)", "p99 (ms)", "Runs"}}
	for _, m := range b.d.Meshes {
		g := b.d.Group(m, c)
		if g == nil || len(g.Values(analysis.NamespaceP50)) == 0 {
			continue
		}
		row := []string{m}
		for _, metric := range []analysis.Metric{analysis.NamespaceP50, analysis.NamespaceP95, analysis.NamespaceP99} {
			row = append(row, est(g.Estimate(metric), 1))
		}
		t.Rows = append(t.Rows, append(row, runs(g)))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}
