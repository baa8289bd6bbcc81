package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/search"
)

// A capacity is computed from its search's stored trials, not read from
// the estimate the run stored: a study.json whose capacities say one
// thing (here the point estimate with no interval, as an older
// meshbench stored it) is reported with what its trials give now.
func TestCapacityIsReestimatedFromItsTrials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteCapacity(dir); err != nil {
		t.Fatal(err)
	}
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]search.Result{}
	for i := range ix.Capacity {
		// The search's configuration, as a run stores it (the fixture's
		// study file's search).
		ix.Capacity[i].Config = &search.Config{SLO: ix.Capacity[i].SLO, Start: 50, Growth: 2, Trial: 3 * time.Second, Trials: 8,
			MinRequests: 1000, RequestsPerUnit: 1, Retries: 2, MinRate: 1, MaxTrials: 20, Resamples: 200, Unit: "req/s"}
		c := ix.Capacity[i]
		r := c.Result
		for _, tr := range c.Trials {
			r.Trials = append(r.Trials, tr.Trial)
		}
		want[c.Mesh] = search.Reestimate(r)
		ix.Capacity[i].CILow, ix.Capacity[i].CIHigh, ix.Capacity[i].Level, ix.Capacity[i].Kind = c.RPS, c.RPS, 0, ""
	}
	b, err := json.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.IndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err = results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := loadCapacities(dir, ix)
	if len(got) != len(want) {
		t.Fatalf("%d capacities, want %d", len(got), len(want))
	}
	for _, c := range got {
		w := want[c.Mesh]
		if w.Form() == search.FormPoint {
			t.Fatalf("%s: the fixture's trials give a point, as stored: the test cannot tell", c.Mesh)
		}
		if c.Form() != w.Form() || c.RPS != w.RPS || c.CILow != w.CILow || c.CIHigh != w.CIHigh || c.Level != w.Level {
			t.Errorf("%s: capacity %s %v [%v, %v] at %v, want its trials' %s %v [%v, %v] at %v", c.Mesh, c.Form(), c.RPS, c.CILow, c.CIHigh, c.Level, w.Form(), w.RPS, w.CILow, w.CIHigh, w.Level)
		}
		if len(c.Result.Trials) != len(c.Trials) {
			t.Errorf("%s: %d trials in the result, %d stored", c.Mesh, len(c.Result.Trials), len(c.Trials))
		}
	}
}
