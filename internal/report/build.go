package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/topology"
)

// builder assembles one study's document.
type builder struct {
	d      *analysis.Dataset
	colour map[string]string // mesh -> colour, the same in every chart
	// graphName and calls are the workload graph the results keep and
	// its calls per request; calls is 0 without one.
	graphName string
	calls     float64
}

// Build turns a dataset into the report's document: a summary, the
// study-shaped tables and charts, the excluded cells and the provenance.
func Build(d *analysis.Dataset) *Document {
	judged, err := Thresholds(d)
	return build(d, judged, err)
}

// build is Build with the study's thresholds judged already (Thresholds),
// or the error that stopped them.
func build(d *analysis.Dataset, judged []ThresholdOutcome, thresholdsErr error) *Document {
	b := &builder{d: d, colour: meshColours(d)}
	b.graphName, b.calls = keptGraph(d)
	v, verr := b.verdictModel()
	doc := &Document{
		Title:      "meshbench report: " + d.Index.Study,
		Subtitle:   b.subtitle(),
		Banner:     b.banner(),
		Verdict:    v,
		Thresholds: judged,
	}
	sections := []Section{b.verdict(v, verr), b.thresholdsSection(judged, thresholdsErr), b.capacity()}
	if len(d.Configs) > 0 {
		sections = append(sections, b.summary(), b.published(), b.latency(), b.overhead(), b.releases(), b.churn(), b.bulk(), b.latencyVsLoad(), b.resources(), b.tenants(),
			b.replicaSweep(), b.replicaSpread(), b.allocation(), b.cost(), b.parity())
	}
	for _, s := range sections {
		if len(s.Blocks) > 0 {
			doc.Sections = append(doc.Sections, s)
		}
	}
	for _, s := range []Section{b.precision(), b.notMeasured()} {
		if len(s.Blocks) > 0 {
			doc.Sections = append(doc.Sections, s)
		}
	}
	doc.Sections = append(doc.Sections, b.excluded(), b.reproduce(), b.provenance(), b.glossary())
	return doc
}

// keptGraph is the name of the workload graph the results directory keeps
// (results.GraphFile) and its calls per request; none when it keeps none
// or it does not parse, which the verdict's notes then say.
func keptGraph(d *analysis.Dataset) (string, float64) {
	data, err := confined.ReadFile(d.Dir, results.GraphFile, results.MaxStudyBytes)
	if err != nil {
		return "", 0
	}
	g, err := topology.Parse(data)
	if err != nil {
		return "", 0
	}
	return g.Name, g.CallsPerRequest()
}

func (b *builder) subtitle() string {
	ix := b.d.Index
	cells := plural(len(ix.Cells), "cell", "cells")
	if ix.Planned > len(ix.Cells) {
		cells = fmt.Sprintf("%d of %s", len(ix.Cells), plural(ix.Planned, "planned cell", "planned cells"))
	}
	s := fmt.Sprintf("%s (%d excluded), %s, %s; run %s",
		cells, len(b.d.Excluded), plural(len(b.d.Meshes), "mesh", "meshes"), plural(len(b.d.Configs), "load configuration", "load configurations"), ix.Start.UTC().Format("2006-01-02 15:04 MST"))
	if len(ix.Cells) == 0 && len(ix.Capacity) > 0 {
		trials := 0
		for _, c := range ix.Capacity {
			trials += len(c.Trials)
		}
		s = fmt.Sprintf("capacity search: %s, %s; run %s", plural(trials, "trial", "trials"), plural(len(ix.Capacity), "mesh", "meshes"), ix.Start.UTC().Format("2006-01-02 15:04 MST"))
	}
	if !ix.End.IsZero() {
		s += " to " + ix.End.UTC().Format("2006-01-02 15:04 MST")
	}
	if !ix.Complete {
		s += ". The run is INCOMPLETE: interrupted or still going"
	}
	return s
}

// meshesWith returns the meshes that measured a part, in report order.
func (b *builder) meshesWith(p analysis.Part) []string {
	var out []string
	for _, m := range b.d.Meshes {
		if b.d.HasPart(m, p) {
			out = append(out, m)
		}
	}
	return out
}

// short labels a configuration by its values alone, for chart categories;
// shortAxis names the parameters in the same order.
func short(c analysis.LoadConfig, params []analysis.Param) string {
	var v []string
	for _, p := range params {
		if x, ok := c.Params[p.Name]; ok {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return "all"
	}
	return strings.Join(v, " / ")
}

func shortAxis(params []analysis.Param) string {
	var n []string
	for _, p := range params {
		n = append(n, p.Name)
	}
	if len(n) == 0 {
		return "configuration"
	}
	return strings.Join(n, " / ")
}

// loadText describes the load of a configuration as its cells ran it.
func loadText(g *analysis.Group) string {
	if g == nil || len(g.Reps) == 0 {
		return ""
	}
	o := g.Reps[0].Load.Options
	var parts []string
	switch offered := g.Reps[0].Values[analysis.Offered]; {
	case offered > 0:
		parts = append(parts, fmt.Sprintf("open loop offering %s req/s in total", num(offered)))
	case o.Rate > 0:
		parts = append(parts, fmt.Sprintf("open loop offering %s req/s per generator", num(o.Rate)))
	default:
		parts = append(parts, "closed loop")
	}
	if o.ArrivalsOf() == load.ArrivalsPoisson {
		parts = append(parts, "Poisson arrivals")
	}
	parts = append(parts, fmt.Sprintf("%d connections", o.Connections))
	if o.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", o.Requests))
	}
	if o.Duration > 0 {
		parts = append(parts, o.Duration.String())
	}
	if o.NoKeepAlive {
		parts = append(parts, "keep-alive off")
	}
	if o.HTTP2 {
		parts = append(parts, "HTTP/2")
	}
	if p := g.Reps[0].Load.Path; p != "" {
		parts = append(parts, "through the "+string(p))
	}
	return strings.Join(parts, ", ")
}

// closedAt reports whether a configuration's cells ran a closed loop,
// whose figures are throughput and latency, never added latency.
func (b *builder) closedAt(c analysis.LoadConfig) bool { return b.d.ClosedLoopAt(c) }

// littleNote says, once, why a closed loop shows no added latency.
const littleNote = "In a closed loop each connection sends when its last answer comes, so latency is connections over throughput (Little's law: 32 connections at 143.8 req/s wait 222 ms) " +
	"and a latency added to the baseline's would only restate a loss of throughput: a closed-loop configuration shows each mesh's throughput against the baseline's, paired by round, and its own p50 and p99, never added latency."

// firstGroup returns any mesh's group at a configuration.
func (b *builder) firstGroup(c analysis.LoadConfig) *analysis.Group {
	for _, m := range b.d.Meshes {
		if g := b.d.Group(m, c); g != nil && len(g.Reps) > 0 {
			return g
		}
	}
	return nil
}

var nan = math.NaN()

const intervalNote = "Each figure is the median over its units (the deployments, or the rounds of a run with one), with its distribution-free 95% interval in brackets, or the level the design reaches after it where that is below 95% (\"[2.1, 2.6], 75%\")."
