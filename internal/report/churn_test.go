package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

// sweepCell is the figures of one mesh's cell at one value of a sweep,
// the same in each repetition but for a microsecond of latency.
type sweepCell struct {
	p50      time.Duration
	newConns int64
	sidecar  float64 // cores; 0: no sidecar
	memMiB   int64   // the sidecar's working set, rising to this peak
	// distorted marks the cell as one whose load generator set the pace.
	distorted bool
}

// writeSweep writes a results directory of five repetitions of the
// meshes' cells over one parameter's values: 1,000 requests a cell in
// 10 s, and loads it.
func writeSweep(t *testing.T, param string, cells map[string]map[string]sweepCell) *analysis.Dataset {
	t.Helper()
	return writeCells(t, param, cells, nil, nil)
}

// writeCells is writeSweep with each mesh's spec from specs (its profile
// its name where specs has none); with param "" the cells sweep nothing
// and each value is the cell's parameters, "name=value,name=value" (""
// for none). The index holds caps, the
// searches that ran after the cells.
func writeCells(t *testing.T, param string, cells map[string]map[string]sweepCell, specs map[string]mesh.MeshSpec, caps []results.Capacity) *analysis.Dataset {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ix := &results.Index{Schema: results.SchemaVersion, Study: "sweep", Start: start, Complete: true}
	now := start
	meshes := slices.Sorted(maps.Keys(cells))
	for rep := 1; rep <= 6; rep++ {
		for _, name := range meshes {
			for _, v := range slices.Sorted(maps.Keys(cells[name])) {
				f := cells[name][v]
				id := fmt.Sprintf("%s_%s=%s_r%d", name, param, v, rep)
				params := map[string]string{param: v}
				if param == "" {
					id, params = fmt.Sprintf("%s_%s_r%d", name, strings.ReplaceAll(v, ",", "_"), rep), nil
					for kv := range strings.SplitSeq(v, ",") {
						if k, val, ok := strings.Cut(kv, "="); ok {
							if params == nil {
								params = map[string]string{}
							}
							params[k] = val
						}
					}
				}
				spec, ok := specs[name]
				if !ok {
					spec = mesh.MeshSpec{Profile: name}
				}
				end := now.Add(10 * time.Second)
				h := metrics.NewHistogram()
				// Each repetition a microsecond apart, so that the
				// intervals are not one point.
				h.RecordN(f.p50+time.Duration(rep)*time.Microsecond, 1000)
				r := load.Result{Options: load.Options{URL: "http://front.ns-1:8080/", Connections: 16, Rate: 100},
					Start: now, End: end, Requests: 1000, StatusCodes: map[int]int64{200: 1000},
					Latency: h, ByClass: map[string]*metrics.Histogram{"2xx": h}, NewConnections: f.newConns}
				g := results.GeneratorOf(r)
				s := results.Summary{ID: id, File: results.CellFile(id), Mesh: name, Profile: spec.Profile, Repetition: rep, Deployment: rep,
					Status: results.StatusOK, Params: params, Start: now, End: end, Requests: 1000}
				if f.distorted {
					s.Status, s.Reason = results.StatusDistorted, "generator CPU saturated"
				}
				c := &results.Cell{Summary: s, MeshSpec: spec, Merged: &g, Generators: []results.Generator{g}}
				if f.sidecar > 0 {
					var samples []metrics.Sample
					for i := 1; i <= 10; i++ {
						samples = append(samples, metrics.Sample{Time: now.Add(time.Duration(i) * time.Second), CPUCores: f.sidecar,
							WorkingSet: f.memMiB << 20 * int64(i) / 10})
					}
					c.Resources = []metrics.Series{{Component: metrics.Component{Role: metrics.RoleSidecar, Node: "app", Namespace: "ns-1",
						Pod: "front", Container: "istio-proxy"}, Samples: samples}}
				}
				if err := results.WriteCell(dir, c); err != nil {
					t.Fatal(err)
				}
				s.SHA256, s.Bytes = c.SHA256, c.Bytes
				ix.Cells = append(ix.Cells, s)
				now = end
			}
		}
	}
	ix.End, ix.Planned, ix.Capacity = now, len(ix.Cells), caps
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sectionTables returns the tables of the document's section id.
func sectionTables(t *testing.T, d *analysis.Dataset, id string) []*Table {
	t.Helper()
	var tables []*Table
	found := false
	for _, s := range Build(d).Sections {
		if s.ID != id {
			continue
		}
		found = true
		for _, b := range s.Blocks {
			if b.Table != nil {
				tables = append(tables, b.Table)
			}
		}
	}
	if !found {
		t.Fatalf("no %s section", id)
	}
	return tables
}

// tableRow returns the table's first row that begins with first.
func tableRow(t *testing.T, tb *Table, first ...string) []string {
	t.Helper()
	for _, r := range tb.Rows {
		if slices.Equal(r[:len(first)], first) {
			return r
		}
	}
	t.Fatalf("no row %v in %v", first, tb.Rows)
	return nil
}

// TestChurnSection writes a conn_requests sweep whose figures are known:
// 100 req/s for 10 s; with a new connection per request the baseline's
// p50 goes from 1 ms to 1.5 ms and the sidecar mesh's from 2 ms to 4 ms,
// and the sidecar's CPU from 0.1 to 0.3 cores. The section must read
// +2 ms added (+1.5 ms beyond the baseline's +0.5), 1000 µs of sidecar CPU
// per request kept open and 2000 µs per new connection.
func TestChurnSection(t *testing.T) {
	d := writeSweep(t, "conn_requests", map[string]map[string]sweepCell{
		"baseline": {"0": {p50: time.Millisecond}, "1": {p50: 1500 * time.Microsecond, newConns: 1000}},
		"sidecar": {"0": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 50},
			"1": {p50: 4 * time.Millisecond, newConns: 1000, sidecar: 0.3, memMiB: 50}},
	})
	tables := sectionTables(t, d, "churn")
	if len(tables) != 3 {
		t.Fatalf("%d tables, want per mesh, latency and CPU", len(tables))
	}
	if sum := tableRow(t, tables[0], "sidecar", "1"); !strings.HasPrefix(sum[2], "+2.00 ") || !strings.HasPrefix(sum[3], "+2000 ") || len(sum) != 4 {
		t.Errorf("sidecar's row per mesh %q: want p50 +2.00 ms and +2000 µs of data-plane CPU a new connection, and no ceiling", sum)
	}
	tables = tables[1:]
	lat := tableRow(t, tables[0], "sidecar", "1")
	if !strings.HasPrefix(lat[2], "100 ") || !strings.HasPrefix(lat[4], "+2.00 ") || lat[5] != "+1.50" {
		t.Errorf("sidecar latency row %q: want 100 new connections/s, p50 +2.00 ms added, +1.50 beyond the baseline", lat)
	}
	if base := tableRow(t, tables[0], "baseline", "1"); !strings.HasPrefix(base[4], "+0.500 ") || base[5] != "—" {
		t.Errorf("baseline latency row %q: want +0.500 ms added", base)
	}
	cpu := tableRow(t, tables[1], "sidecar", "sidecar", "1")
	if cpu[3] != "1000" || !strings.HasPrefix(cpu[4], "+2000 ") || cpu[5] != "2.00x" {
		t.Errorf("sidecar CPU row %q: want 1000 µs a request kept open, +2000 µs a new connection, 2.00x", cpu)
	}
}

// TestChurnSectionCeiling is the churn preset's shape: the sweep's cells,
// then a search over the connections held open that found the baseline's
// ceiling at 9000 connections [8000, 10000] and the sidecar's at 4000
// [3500, 4500]. The section's table per mesh gives, beside the cost of a
// new connection, each mesh's ceiling with its interval, and the verdict
// names its column a connection ceiling, not a rate.
func TestChurnSectionCeiling(t *testing.T) {
	t.Parallel()
	ceiling := func(m string, c, lo, hi float64) results.Capacity {
		return results.Capacity{Mesh: m, Profile: m, Over: results.OverConnections, Status: results.StatusOK, Trials: []results.CapacityTrial{},
			Result: search.Result{SLO: search.SLO{P99: 50 * time.Millisecond, MaxErrorRate: 0.001}, Kind: search.FormInterval, RPS: c, CILow: lo, CIHigh: hi,
				Lower: lo, Upper: hi, Complete: true}}
	}
	d := writeCells(t, "conn_requests", map[string]map[string]sweepCell{
		"baseline": {"0": {p50: time.Millisecond}, "1": {p50: 1500 * time.Microsecond, newConns: 1000}},
		"sidecar": {"0": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 50},
			"1": {p50: 4 * time.Millisecond, newConns: 1000, sidecar: 0.3, memMiB: 50}},
	}, nil, []results.Capacity{ceiling("baseline", 9000, 8000, 10000), ceiling("sidecar", 4000, 3500, 4500)})
	sum := sectionTables(t, d, "churn")[0]
	if want := []string{"sidecar", "1"}; !slices.Equal(sum.Rows[len(sum.Rows)-1][:2], want) {
		t.Fatalf("per mesh rows %q", sum.Rows)
	}
	for _, tc := range []struct{ mesh, ceiling, interval string }{{"baseline", "9000", "8000 to 10000"}, {"sidecar", "4000", "3500 to 4500"}} {
		row := tableRow(t, sum, tc.mesh, "1")
		if row[4] != tc.ceiling || row[5] != tc.interval {
			t.Errorf("%s: ceiling %q interval %q, want %s, %s", tc.mesh, row[4], row[5], tc.ceiling, tc.interval)
		}
	}
	verdict := sectionTables(t, d, "verdict")[0]
	if verdict.Header[3] != "Connection ceiling (connections)" {
		t.Errorf("verdict column %q, want the connection ceiling", verdict.Header[3])
	}
	// The fixture's searches list no trials, so the verdict's figure rests
	// on one search and shows no interval; the section above has it.
	if row := tableRow(t, verdict, "sidecar"); !strings.HasPrefix(row[3], "4000") || !strings.HasSuffix(row[3], "(0.444× baseline)") {
		t.Errorf("verdict row %q: want the ceiling with its interval and the ratio held", row)
	}
	if vm := findVerdictMesh(t, Build(d).Verdict, "sidecar"); !strings.Contains(vm.Sentence, "sustains 0.444× baseline's concurrent-connection ceiling") {
		t.Errorf("sentence %q: want the ratio held", vm.Sentence)
	}
}
