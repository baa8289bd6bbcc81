package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// TestChurnSection writes a conn_requests sweep whose figures are known:
// 100 req/s for 10 s; with a new connection per request the baseline's
// p50 goes from 1 ms to 1.5 ms and the sidecar mesh's from 2 ms to 4 ms,
// and the sidecar's CPU from 0.1 to 0.3 cores. The section must read
// +2 ms added (+1.5 ms beyond the baseline's +0.5), 1000 µs of sidecar CPU
// per request kept open and 2000 µs per new connection.
func TestChurnSection(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ix := &results.Index{Schema: results.SchemaVersion, Study: "churn", Start: start, Complete: true}
	now := start
	type figures struct {
		p50     time.Duration
		sidecar float64 // cores; 0: no sidecar
	}
	cells := map[string]map[string]figures{
		"baseline": {"0": {p50: time.Millisecond}, "1": {p50: 1500 * time.Microsecond}},
		"sidecar":  {"0": {p50: 2 * time.Millisecond, sidecar: 0.1}, "1": {p50: 4 * time.Millisecond, sidecar: 0.3}},
	}
	for rep := 1; rep <= 5; rep++ {
		for _, name := range []string{"baseline", "sidecar"} {
			for _, cr := range []string{"0", "1"} {
				f := cells[name][cr]
				id := fmt.Sprintf("%s_conn_requests=%s_r%d", name, cr, rep)
				end := now.Add(10 * time.Second)
				h := metrics.NewHistogram()
				// Each repetition a microsecond apart, so that the
				// intervals are not one point.
				h.RecordN(f.p50+time.Duration(rep)*time.Microsecond, 1000)
				var newConns int64
				if cr == "1" {
					newConns = 1000
				}
				r := load.Result{Options: load.Options{URL: "http://front.ns-1:8080/", Connections: 16, Rate: 100},
					Start: now, End: end, Requests: 1000, StatusCodes: map[int]int64{200: 1000},
					Latency: h, ByClass: map[string]*metrics.Histogram{"2xx": h}, NewConnections: newConns}
				g := results.GeneratorOf(r)
				s := results.Summary{ID: id, File: results.CellFile(id), Mesh: name, Profile: name, Repetition: rep,
					Status: results.StatusOK, Params: map[string]string{"conn_requests": cr}, Start: now, End: end, Requests: 1000}
				c := &results.Cell{Summary: s, MeshSpec: mesh.MeshSpec{Profile: name}, Merged: &g, Generators: []results.Generator{g}}
				if f.sidecar > 0 {
					var samples []metrics.Sample
					for i := 1; i <= 10; i++ {
						samples = append(samples, metrics.Sample{Time: now.Add(time.Duration(i) * time.Second), CPUCores: f.sidecar, WorkingSet: 50 << 20})
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
	ix.End, ix.Planned = now, len(ix.Cells)
	if err := results.WriteJSON(filepath.Join(dir, results.IndexFile), ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var churn *Section
	doc := Build(d)
	for i := range doc.Sections {
		if doc.Sections[i].ID == "churn" {
			churn = &doc.Sections[i]
		}
	}
	if churn == nil {
		t.Fatal("no churn section")
	}
	var tables []*Table
	for _, b := range churn.Blocks {
		if b.Table != nil {
			tables = append(tables, b.Table)
		}
	}
	if len(tables) != 2 {
		t.Fatalf("%d tables, want latency and CPU", len(tables))
	}
	row := func(tb *Table, first ...string) []string {
		for _, r := range tb.Rows {
			if slices.Equal(r[:len(first)], first) {
				return r
			}
		}
		t.Fatalf("no row %v in %v", first, tb.Rows)
		return nil
	}
	lat := row(tables[0], "sidecar", "1")
	if !strings.HasPrefix(lat[2], "100 ") || !strings.HasPrefix(lat[4], "+2.00 ") || lat[5] != "+1.50" {
		t.Errorf("sidecar latency row %q: want 100 new connections/s, p50 +2.00 ms added, +1.50 beyond the baseline", lat)
	}
	if base := row(tables[0], "baseline", "1"); !strings.HasPrefix(base[4], "+0.500 ") || base[5] != "—" {
		t.Errorf("baseline latency row %q: want +0.500 ms added", base)
	}
	cpu := row(tables[1], "sidecar", "sidecar", "1")
	if cpu[3] != "1000" || !strings.HasPrefix(cpu[4], "+2000 ") || cpu[5] != "2.00x" {
		t.Errorf("sidecar CPU row %q: want 1000 µs a request kept open, +2000 µs a new connection, 2.00x", cpu)
	}
}
