package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestRateSweepShowsOfferedRate turns the fixture's connection sweep into
// an open-loop rate sweep scaled for the run (each study rate v sent as
// v/4 by each of two generators) and checks that the text and the chart
// both give the rate sent, v/2 in total, not the study's v.
func TestRateSweepShowsOfferedRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ix.Cells {
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(s.Params["connections"], 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []map[string]string{s.Params, c.Params} {
			p["rate"] = p["connections"]
			delete(p, "connections")
		}
		c.Summary.Params = s.Params
		c.Load.Options.Rate = v / 4
		if c.Merged != nil {
			g := *c.Merged
			g.Options.Rate = v / 4
			c.Generators = []results.Generator{g, g}
		}
		if err := results.WriteCell(dir, c); err != nil {
			t.Fatal(err)
		}
		ix.Cells[i] = c.Summary
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	var texts, svgs []string
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			texts = append(texts, b.Text)
			if b.Chart != nil && s.ID == "latency-vs-load" {
				svgs = append(svgs, b.Chart.SVG)
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"open loop offering 32.0 req/s in total", "against the offered rate (rate scaled for the run, over every generator)"} {
		if !strings.Contains(all, want) {
			t.Errorf("report text lacks %q", want)
		}
	}
	if strings.Contains(all, "offering 128.0 req/s") {
		t.Error("report text gives the study's rate as the rate offered")
	}
	if len(svgs) == 0 {
		t.Fatal("no latency-against-load chart")
	}
	for _, svg := range svgs {
		for _, want := range []string{analysis.Offered.Label(), ">16.0<", ">32.0<", ">64.0<"} {
			if !strings.Contains(svg, want) {
				t.Errorf("chart lacks %q", want)
			}
		}
		if strings.Contains(svg, ">128") {
			t.Error("chart has a tick at the study's 128, which no cell sent")
		}
	}
}
