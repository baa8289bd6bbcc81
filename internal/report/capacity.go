package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// capacity renders a search study: each mesh's capacity at the SLO with
// its interval, the latency-throughput curve of its trials, the CPU it
// takes per 1000 req/s at capacity split into idle and per-request parts.
// It prices no request: the verdict's USD per million requests is the
// report's one (see the glossary).
func (b *builder) capacity() Section {
	s := Section{ID: "capacity", Title: "Capacity at the SLO"}
	caps := b.d.Capacity
	if len(caps) == 0 {
		return s
	}
	slo := caps[0].SLO
	what, unit := "The highest open-loop rate at which each mesh met the SLO (%s), found by search: the rate", "req/s"
	if connectionCeiling(caps) {
		s.Title = "Concurrent-connection ceiling at the SLO"
		what, unit = "The most connections each mesh held open, each sending slow requests (the trials' achieved rate), while meeting the SLO (%s), found by search: the count", "connections"
	}
	s.Blocks = append(s.Blocks, text(fmt.Sprintf(what+
		" grew by a factor until the SLO had been both met and broken; then each locating trial ran where a censored logistic fit of every trial's SLO score so far put the capacity, "+
		"the rate at which a trial breaks the SLO with probability %g. Every trial carried at least the requests its percentile needs. "+
		"The search ran in one deployment, and the parametric bootstrap of the whole search gives its own 95%% interval, which counts that search's trials alone; "+
		"where the run had several deployments, the interval shown adds their scatter, that of the mesh's calibrated closed-loop capacity over them, which a fresh deployment draws anew (Interval over says which interval it is, and gives the search's own). "+
		"A search that stopped short (its budget) gives a bound, marked ≥, not an estimate, lowered the same way. "+
		"Trials in which a load generator saturated or the host was noisy are no evidence and were run again. "+
		"The meshes' trials interleaved.", slo, search.BreachProbability)))
	t := &Table{Header: []string{"Mesh", "Capacity (" + unit + ")", "95% interval", "Interval over", "Relative to " + caps[0].Mesh, "Met at / broken at (" + unit + ")", "Trials", "Note"}}
	for _, c := range caps {
		if c.Status != results.StatusOK {
			t.Rows = append(t.Rows, []string{c.Mesh, "—", "—", "—", "—", "—", fmt.Sprint(len(c.Trials)), strings.TrimSpace(c.Status + ": " + c.Reason)})
			continue
		}
		if c.RPS <= 0 {
			t.Rows = append(t.Rows, []string{c.Mesh, "none", "—", "—", "—", bracketText(c), trialsText(c), c.Note})
			continue
		}
		e, sp := b.d.CapacityQuote(c)
		rel := "—"
		if base := caps[0]; c.Mesh != base.Mesh {
			if r, _, ok := b.d.CapacityRatio(c, base); ok {
				rel = relText(r)
			}
		}
		t.Rows = append(t.Rows, []string{c.Mesh, bounded(num(e.Median), e.MedianBound), quoteIntervalText(c, e), spanText(c, sp), rel, bracketText(c), trialsText(c), c.Note})
	}
	s.Blocks = append(s.Blocks, table(t), chartBlock(b.capacityBars(unit)))
	for _, c := range caps {
		if ch := b.capacityCurve(c, unit); ch != nil {
			s.Blocks = append(s.Blocks, chartBlock(ch))
		}
	}
	if connectionCeiling(caps) {
		s.Blocks = append(s.Blocks, text("No CPU per request or dollars per million requests at the ceiling: the search varied the connections held open, not the rate they carried."))
	} else {
		s.Blocks = append(s.Blocks, b.capacityCPU()...)
	}
	for _, c := range caps {
		s.Blocks = append(s.Blocks, folded("Trials of "+c.Mesh, trialsTable(c, unit)))
	}
	return s
}

// connectionCeiling says whether the searches varied the connections held
// open rather than the rate.
func connectionCeiling(caps []*analysis.CapacityMesh) bool {
	return len(caps) > 0 && caps[0].Over == results.OverConnections
}

// capacityNum is the capacity, marked "≥" where it is a lower bound.
func capacityNum(c *analysis.CapacityMesh) string {
	if c.LowerBound {
		return "≥ " + num(c.RPS)
	}
	return num(c.RPS)
}

// quoteIntervalText is a quoted capacity's interval, or why it has none.
func quoteIntervalText(c *analysis.CapacityMesh, e analysis.Estimate) string {
	if e.Interval() {
		return fmt.Sprintf("%s to %s", num(e.Lo), num(e.Hi))
	}
	return intervalText(c)
}

// spanText says what a quoted capacity's interval spans: the run's
// deployments, with the search's own interval or bound and the scatter
// that widened it, or the one search, and why.
func spanText(c *analysis.CapacityMesh, sp analysis.Spread) string {
	if sp.Within() {
		return sp.Why
	}
	own := "bound ≥ " + num(c.RPS)
	if hasInterval(c) {
		own = "interval " + num(c.CILow) + " to " + num(c.CIHigh)
	}
	return fmt.Sprintf("%d deployments: the search's own %s, widened by %s", sp.N, own, spreadText(sp, c.Mesh))
}

// spreadText says what a Spread is: "the 5.9% scatter of sidecar's
// calibrated closed-loop capacity", its log's standard deviation.
func spreadText(sp analysis.Spread, mesh string) string {
	whose := "its"
	if !slices.Contains(sp.From, mesh) {
		whose = strings.Join(sp.From, " and ") + "'s"
	}
	return fmt.Sprintf("the %s%% scatter of %s calibrated closed-loop capacity", num(100*sp.SD), whose)
}

// relText is a capacity ratio as a relative difference, with its interval
// or its bound: "−88.7% [−91.0%, −86.0%]", "≥ −50.0%".
func relText(r analysis.Estimate) string {
	pct := func(v float64) string { return signed(100*(v-1)) + "%" }
	if r.Interval() {
		return fmt.Sprintf("%s [%s, %s]", pct(r.Median), pct(r.Lo), pct(r.Hi))
	}
	return bounded(pct(r.Median), r.MedianBound)
}

// intervalText is the search's own interval, or why it has none.
func intervalText(c *analysis.CapacityMesh) string {
	switch c.Form() {
	case search.FormInterval:
		return fmt.Sprintf("%s to %s", num(c.CILow), num(c.CIHigh))
	case search.FormBound:
		return "none: a bound, the capacity is at least this"
	}
	return "none (a result older than schema 17, which gave no interval here)"
}

func bracketText(c *analysis.CapacityMesh) string {
	if c.Lower == 0 {
		return "— / " + num(c.Upper)
	}
	if c.Upper == 0 {
		return num(c.Lower) + " / —"
	}
	return num(c.Lower) + " / " + num(c.Upper)
}

func trialsText(c *analysis.CapacityMesh) string {
	var inconclusive int
	for _, t := range c.Trials {
		if t.Verdict == search.Inconclusive {
			inconclusive++
		}
	}
	if inconclusive == 0 {
		return fmt.Sprint(len(c.Trials))
	}
	return fmt.Sprintf("%d (%d inconclusive)", len(c.Trials), inconclusive)
}

func (b *builder) capacityBars(unit string) *Chart {
	var cats []string
	var bars []chart.Bar
	for _, c := range b.d.Capacity {
		cats = append(cats, c.Mesh)
		bar := chart.Bar{V: math.NaN()}
		if e, _ := b.d.CapacityQuote(c); e.Valid() {
			bar = chart.Bar{V: e.Median, Lo: e.Lo, Hi: e.Hi}
		}
		bars = append(bars, bar)
	}
	title := "Capacity at " + b.d.Capacity[0].SLO.String()
	return &Chart{File: "capacity", Title: title, Caption: "Whiskers: the 95% interval of the table above, over the run's deployments where it had several (Interval over).",
		SVG: chart.Bars{Title: title, X: "mesh", Y: chart.Axis{Label: "capacity (" + unit + ")"}, Categories: cats,
			Series: []chart.BarSeries{{Name: "capacity", Bars: bars}}}.SVG()}
}

// capacityCurve plots every conclusive trial's p50 and p99 against its
// offered rate, the SLO's p99 limit, and the capacity found.
func (b *builder) capacityCurve(c *analysis.CapacityMesh, unit string) *Chart {
	trials := slices.Clone(c.Trials)
	slices.SortStableFunc(trials, func(x, y results.CapacityTrial) int { return cmp.Compare(x.Rate, y.Rate) })
	var p50, p99 []chart.Point
	lo, hi := math.Inf(1), 0.0
	for _, t := range trials {
		if t.Verdict == search.Inconclusive || t.Requests == 0 {
			continue
		}
		p50 = append(p50, chart.Point{X: t.Rate, Y: t.P50Ms})
		p99 = append(p99, chart.Point{X: t.Rate, Y: t.P99Ms})
		lo, hi = min(lo, t.P50Ms), max(hi, t.P99Ms)
	}
	if len(p99) == 0 {
		return nil
	}
	series := []chart.Series{
		{Name: "p50", Colour: b.colour[c.Mesh], Points: p50},
		{Name: "p99", Colour: b.colour[c.Mesh], Dashed: true, Points: p99},
	}
	xlo, xhi := p99[0].X, p99[len(p99)-1].X
	if limit := float64(c.SLO.P99) / 1e6; limit > 0 {
		series = append(series, chart.Series{Name: "SLO: p99 " + c.SLO.P99.String(), Colour: "#888888", Dashed: true,
			Points: []chart.Point{{X: xlo, Y: limit}, {X: xhi, Y: limit}}})
		lo, hi = min(lo, limit), max(hi, limit)
	}
	if c.Status == results.StatusOK && c.RPS > 0 {
		series = append(series, chart.Series{Name: "capacity " + num(c.RPS) + " " + unit, Colour: "#000000",
			Points: []chart.Point{{X: c.RPS, Y: lo}, {X: c.RPS, Y: hi}}})
	}
	offered := "offered rate (req/s)"
	if unit != "req/s" {
		offered = "connections held open"
	}
	title := "Latency against " + strings.TrimSuffix(offered, " (req/s)") + ": " + c.Mesh
	return &Chart{File: "capacity-curve-" + slug(c.Mesh), Title: title,
		Caption: "Every conclusive trial, short and confirmation; the vertical line is the capacity found.",
		SVG: chart.Line{Title: title, X: chart.Axis{Label: offered},
			Y: chart.Axis{Label: "latency (ms)", Scale: chart.Log}, Series: series}.SVG()}
}

// capacityCPU tabulates, per mesh and component, the CPU fitted over the
// trials as an idle part and a per-request part, and what that makes per
// 1000 req/s at the capacity.
func (b *builder) capacityCPU() []Block {
	t := &Table{Header: []string{"Mesh", "Component", "Idle (cores)", "Per 1000 req/s (cores)", "At capacity: cores per 1000 req/s", "of which idle", "of which per-request", "Fit (trials, R²)"}}
	for _, c := range b.d.Capacity {
		if c.Status != results.StatusOK {
			continue
		}
		var total float64
		for _, f := range c.Fits {
			name := string(f.Role)
			if f.Role == metrics.RoleLoad {
				name += " (not counted)"
			}
			row := []string{c.Mesh, name, num(f.Idle), num(f.PerRPS * 1000), "—", "—", "—", fmt.Sprintf("%d, %s", f.N, num(f.R2))}
			if c.RPS > 0 {
				per := f.At(c.RPS) / c.RPS * 1000
				if f.Role != metrics.RoleLoad {
					total += per
				}
				row[4], row[5], row[6] = num(per), num(f.Idle/c.RPS*1000), num(f.PerRPS*1000)
			}
			t.Rows = append(t.Rows, row)
		}
		if len(c.Fits) > 0 && c.RPS > 0 {
			t.Rows = append(t.Rows, []string{c.Mesh, "all but load", "", "", num(total), "", "", ""})
		}
	}
	if len(t.Rows) == 0 {
		return []Block{text("No CPU per request: no conclusive trial holds resource samples.")}
	}
	return []Block{heading("CPU per 1000 req/s at capacity"),
		text("Each component's mean CPU in each conclusive trial, fitted against the trial's achieved rate as idle + slope x rate (least squares), " +
			"then read at the capacity (a dash where a mesh has none). The idle part is what the component burns with no traffic, divided over the capacity's requests; " +
			"the per-request part is the slope. A CPU figure divided by a low rate is mostly idle CPU and no marginal cost; this split says which is which."),
		table(t)}
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }

func trialsTable(c *analysis.CapacityMesh, unit string) *Table {
	achieved := "Achieved (req/s)"
	if unit != "req/s" {
		// The search judged the achieved rate in connections' worth.
		achieved = "Achieved (connections whose requests were sent)"
	}
	t := &Table{Header: []string{"#", "Phase", "Offered (" + unit + ")", achieved, "Length", "p50 (ms)", "p99 (ms)", "Errors", "Verdict", "Cell"}}
	for i, tr := range c.Trials {
		v := string(tr.Verdict)
		if tr.Why != "" {
			v += ": " + tr.Why
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), tr.Phase, num(tr.Rate), num(tr.Achieved), tr.Duration.String(),
			num(tr.P50Ms), num(tr.P99Ms), fmt.Sprintf("%d of %d", tr.Errors, tr.Requests), v, tr.File})
	}
	return t
}

// hasInterval reports whether a capacity is an estimate with its 95%
// interval, not a bound or an older result's point.
func hasInterval(c *analysis.CapacityMesh) bool { return c.Form() == search.FormInterval }

// noIntervalWhy says why a capacity has no interval.
func noIntervalWhy(c *analysis.CapacityMesh) string {
	if c.Form() == search.FormBound {
		return "a bound: the search stopped short"
	}
	return "a result older than schema 17"
}
