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
	if v.ID != "verdict" || v.Blocks[0].Table == nil || doc.Verdict == nil {
		t.Fatalf("the first section is %q, want the verdict table", v.ID)
	}
	for _, m := range resultstest.CapacityMeshes {
		vm := findVerdictMesh(t, doc.Verdict, m.Name)
		if f := vm.Throughput; f == nil || f.Value != m.Capacity || !near(f.Low, 0.97*m.Capacity) || !near(f.High, 1.03*m.Capacity) || f.Unit != "req/s" {
			t.Errorf("%s throughput %+v, want the capacity at the SLO %v [%v, %v]", m.Name, f, m.Capacity, 0.97*m.Capacity, 1.03*m.Capacity)
		}
		// The fixture's cells are a closed loop: their latency, never an
		// added latency, beside the capacity.
		if vm.AddedP50 != nil || vm.P50 == nil || !vm.P50.estimate().Interval() {
			t.Errorf("%s: added p50 %+v, p50 %+v; want the closed loop's own p50 with an interval", m.Name, vm.AddedP50, vm.P50)
		}
		if m.Name == resultstest.Baseline {
			continue
		}
		if r := vm.ThroughputRatio; r == nil || !near(r.Value, m.Capacity/resultstest.CapacityMeshes[0].Capacity) {
			t.Errorf("%s ratio %+v, want %v", m.Name, r, m.Capacity/resultstest.CapacityMeshes[0].Capacity)
		}
		if !strings.Contains(vm.Sentence, "at p99 <= 10ms") {
			t.Errorf("%s: sentence %q does not name the capacity's kind", m.Name, vm.Sentence)
		}
	}
	if notes := strings.Join(v.Blocks[0].Table.Notes, " "); !strings.Contains(notes, "Throughput is the capacity at the SLO") {
		t.Errorf("the verdict does not name its throughput's kind: %s", notes)
	}
}

func findVerdictMesh(t *testing.T, v *Verdict, mesh string) *VerdictMesh {
	t.Helper()
	for i := range v.Meshes {
		if v.Meshes[i].Mesh == mesh {
			return &v.Meshes[i]
		}
	}
	t.Fatalf("no verdict for %s", mesh)
	return nil
}
