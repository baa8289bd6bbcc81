package report

import (
	"path/filepath"
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
	if err := results.WriteJSON(filepath.Join(dir, results.IndexFile), ix); err != nil {
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
