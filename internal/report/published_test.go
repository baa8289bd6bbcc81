package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// The fixture's results with published figures added: the report sets
// each beside the run's, orders the meshes and gives a verdict.
func TestPublishedSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]string{"connections": "32", "replicas.productpage": "1"}
	ix.Provenance.Published = []results.Published{
		{Metric: "p50", Mesh: resultstest.Baseline, Params: at, Value: 220, Source: "table A"},
		{Metric: "p50", Mesh: resultstest.Sidecar, Params: at, Value: 255, Source: "table A"},
		{Metric: "ratio:qps", Mesh: resultstest.Sidecar, Params: at, Value: 0.866, Source: "table A"},
		{Metric: "p50", Mesh: "linkerd", Value: 1, Source: "table B"},
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sec *Section
	doc := Build(d)
	for i := range doc.Sections {
		if doc.Sections[i].Title == "Against the published study" {
			sec = &doc.Sections[i]
		}
	}
	if sec == nil {
		t.Fatal("no section \"Against the published study\"")
	}
	tab := sec.Blocks[0].Table
	if tab == nil || len(tab.Rows) != 4 {
		t.Fatalf("table %+v, want 4 rows", tab)
	}
	fs := d.Fidelities()
	for i, row := range tab.Rows {
		f := fs[i]
		if !f.OK {
			if row[4] != "not measured" {
				t.Errorf("row %d %q: want not measured", i, row)
			}
			continue
		}
		if row[4] != num(f.Measured) || row[5] != num(f.Ratio())+"×" || row[7] != f.Published.Source {
			t.Errorf("row %d %q: want this run %s, ratio %s×", i, row, num(f.Measured), num(f.Ratio()))
		}
	}
	var all []string
	for _, b := range sec.Blocks {
		all = append(all, b.Text)
		all = append(all, b.List...)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"Verdict: 3 of 4 published figures measured", "p50 at connections=32 replicas.productpage=1: published order baseline < istio-sidecar; this run baseline < istio-sidecar — the ordering reproduces"} {
		if !strings.Contains(text, want) {
			t.Errorf("section lacks %q:\n%s", want, text)
		}
	}
}

// A run whose app's cost was calibrated explains its throughput ratios
// from the calibration's measured shares, and shows the calibration in
// the scaling section.
func TestPublishedThroughputRatios(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]string{"connections": "32", "replicas.productpage": "1"}
	ix.Provenance.Published = []results.Published{
		{Metric: "ratio:qps", Mesh: resultstest.Sidecar, Params: at, Value: 0.866, Source: "table A"},
	}
	ix.Provenance.Scaling = &results.Scaling{Mode: "calibrated", Reference: resultstest.Sidecar, Factor: 0.01,
		Capacities: map[string]float64{resultstest.Baseline: 30, resultstest.Sidecar: 24},
		Work: &results.WorkCalibration{AppCPUs: 1, ConfiguredMs: 44, AppMsBefore: 50, TargetAppMs: 80, Scale: 1.68,
			StudyShares:  map[string]float64{resultstest.Sidecar: 0.155},
			SharesBefore: map[string]float64{resultstest.Sidecar: 0.4},
			SharesAfter:  map[string]float64{resultstest.Sidecar: 0.25},
			WorkMs:       map[string]float64{"productpage": 48.72}},
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Build(d)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"### Throughput ratios and the app's cost",
		resultstest.Sidecar + " at connections=32 replicas.productpage=1: its proxies cost 15.5% of the app in the study (ratio 0.866) and 25.0% here, measured by the calibration with the calibrated work (ratio 0.800 expected); the cells measured",
		"| " + resultstest.Sidecar + " | 15.5% | 40.0% | 25.0% |",
		"every service's work was scaled by 1.68 (productpage 48.7 ms)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
