package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// A study that runs cells and then a capacity search (as quick does):
// the verdict's throughput is each mesh's capacity at the SLO, with its
// interval and its ratio to the baseline's, beside the cells' added
// latency.
func TestVerdictOfCellsThenSearch(t *testing.T) {
	t.Parallel()
	dir, capDir := t.TempDir(), t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cix, err := resultstest.WriteCapacity(capDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cix.Capacity {
		for _, tr := range c.Trials {
			b, err := os.ReadFile(filepath.Join(capDir, tr.File))
			if err != nil {
				t.Fatal(err)
			}
			if err := results.WriteFile(dir, tr.File, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	ix.Capacity = cix.Capacity
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	v := doc.Sections[0]
	if v.ID != "verdict" || v.Blocks[0].Table == nil {
		t.Fatalf("the first section is %q, want the verdict table", v.ID)
	}
	rows := map[string][]string{}
	for _, r := range v.Blocks[0].Table.Rows {
		rows[r[0]] = r
	}
	for _, m := range resultstest.CapacityMeshes {
		r := rows[m.Name]
		if r == nil {
			t.Fatalf("no verdict row for %s", m.Name)
		}
		if want := num(m.Capacity) + " [" + num(0.97*m.Capacity) + ", " + num(1.03*m.Capacity) + "] at the SLO"; r[4] != want {
			t.Errorf("%s throughput %q, want the capacity at the SLO %q", m.Name, r[4], want)
		}
		if m.Name == resultstest.Baseline {
			continue
		}
		if want := num(m.Capacity/resultstest.CapacityMeshes[0].Capacity) + "×"; r[5] != want {
			t.Errorf("%s ratio %q, want %q", m.Name, r[5], want)
		}
		if verdict := r[len(r)-1]; !strings.Contains(r[1], "[") || !strings.Contains(verdict, "capacity at p99 <= 10ms") {
			t.Errorf("%s: added p50 %q, verdict %q: want an interval and the capacity's kind", m.Name, r[1], verdict)
		}
	}
	if notes := strings.Join(v.Blocks[0].Table.Notes, " "); !strings.Contains(notes, "Throughput is the capacity at the SLO") {
		t.Errorf("the verdict does not name its throughput's kind: %s", notes)
	}
}
