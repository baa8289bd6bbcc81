package predict

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// writeRun writes a profiling run's results with known costs: the sidecar
// mesh's back sidecar burns 0.004 cores idle plus 0.2 ms per request (0.3
// ms at 8000 B), front's 0.007 plus 0.5 ms (received and sent), the
// generator's 0.003 plus 0.1 ms, from 100 req/s up; at 25 req/s each
// burns what a line with 0.003 cores less idle through its CPU at 100
// req/s gives (a proxy costs more per request at low rates). Each sidecar holds 40 MiB
// plus 1 MiB per known service, and 4 KiB more per connection above 8.
// Requests take 1 ms under the baseline and 3 ms under the sidecar (1 ms
// more per hop), at 25 req/s 2 ms and 5 ms (1.5 ms more per hop), each the
// median of a spread of ±50% (so p90 is 1.4 times the median).
func writeRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ix := &results.Index{Schema: results.SchemaVersion, Study: "profile", Start: t0, Complete: true}
	rows := []variant{
		{"http", 1000, 25, 8, 1, 1}, {"http", 1000, 100, 8, 1, 1}, {"http", 1000, 300, 8, 1, 1}, {"http", 1000, 100, 64, 1, 1},
		{"http", 50, 300, 8, 1, 1}, {"http", 8000, 300, 8, 1, 1}, {"http", 1000, 100, 8, 3, 1},
		{"grpc", 1000, 300, 8, 1, 1}, // only the baseline's gRPC cell succeeded
		fanRow,
	}
	for _, mesh := range []string{"baseline", "sidecar"} {
		for i, v := range rows {
			if mesh == "sidecar" && v.protocol == "grpc" {
				continue
			}
			id := fmt.Sprintf("%s_%d", mesh, i)
			s := results.Summary{ID: id, File: results.CellFile(id), Mesh: mesh, Profile: mesh, Status: results.StatusOK,
				AchievedRate: v.rate, Params: map[string]string{
					"protocol": v.protocol, "payload": fmt.Sprint(v.payload), "rate": fmt.Sprint(v.rate),
					"connections": fmt.Sprint(v.connections), "namespaces": fmt.Sprint(v.namespaces), "fanout": fmt.Sprint(v.fanout)}}
			h := metrics.NewHistogram()
			ms := map[bool]float64{false: 1, true: 3}[mesh == "sidecar"]
			if v.rate == 25 {
				ms = map[bool]float64{false: 2, true: 5}[mesh == "sidecar"]
			}
			if v == fanRow {
				ms = map[bool]float64{false: 1.2, true: fanMs}[mesh == "sidecar"]
			}
			// Spread evenly over ±50% of the figure, so that a quantile
			// read at the wrong scale shows.
			for i := range 1000 {
				h.RecordN(time.Duration(ms*(0.5+(float64(i)+0.5)/1000)*float64(time.Millisecond)), 10)
			}
			cell := &results.Cell{Summary: s, Merged: &results.Generator{Latency: h}}
			if mesh == "sidecar" {
				perReq := 1.0
				if v.payload == 8000 {
					perReq = 1.5
				}
				if v == fanRow {
					perReq = 10 // would show in every cost were it read as one
				}
				for ns := 1; ns <= v.namespaces; ns++ {
					for pod, c := range map[string]struct{ idle, k float64 }{"back-0": {0.004, 0.0002}, "front-0": {0.007, 0.0005}, "load": {0.003, 0.0001}} {
						cores := c.idle + c.k*perReq*v.rate
						if v.rate == 25 {
							cores = c.idle - 0.003 + 25*(c.k*perReq+lowExtra)
						}
						mem := float64(40<<20) + float64(1<<20)*float64(2*v.namespaces) + float64(4<<10)*float64(v.connections-8)/3
						c := metrics.Component{Role: metrics.RoleSidecar, Namespace: fmt.Sprintf("ns-%d", ns), Pod: pod, Container: "istio-proxy"}
						var samples []metrics.Sample
						for j := range 8 {
							// A 4-second cell's half-second samples, ±1%
							// around the mean, wandering slowly (four
							// samples low, four high), for a spread the
							// batch means of correlated samples see.
							d := 1 + 0.01*float64(j/4*2-1)
							samples = append(samples, metrics.Sample{Time: t0.Add(time.Duration(j) * time.Second / 2), CPUCores: cores * d, WorkingSet: int64(mem)})
						}
						cell.Resources = append(cell.Resources, metrics.Series{Component: c, Samples: samples})
					}
				}
			}
			if err := results.WriteCell(dir, cell); err != nil {
				t.Fatal(err)
			}
			ix.Cells = append(ix.Cells, cell.Summary)
		}
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fanRow is the fan-out cell: front calls back twice at once, and the
// request takes 1.2 ms under the baseline and fanMs under the sidecar.
var fanRow = variant{"http", 1000, 100, 8, 1, 2}

const fanMs = 5.0

// lowExtra is the cores per request per second a sidecar's line between
// 25 and 100 req/s has above its line from 100 up: (0.005 - 0.002) / 100.
const lowExtra = 0.00003

func TestExtractReadsKnownCosts(t *testing.T) {
	p, err := Extract(writeRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Meshes) != 2 || len(p.Payloads) != 3 || p.Payloads[0] != 50 || p.Payloads[2] != 8000 {
		t.Fatalf("profile: %d meshes, payloads %v", len(p.Meshes), p.Payloads)
	}
	// gRPC worked under the baseline only: the profile does not cover it.
	if len(p.Protocols) != 1 || p.Protocols[0] != "http" || len(p.Uncovered) != 1 || p.Uncovered[0] != "sidecar: no usable cell over grpc" {
		t.Errorf("protocols %v, uncovered %v", p.Protocols, p.Uncovered)
	}
	m, _ := p.Mesh("sidecar")
	r := m.Roles[0]
	if r.Role != "sidecar" || r.Instances != 3 || r.ClientPods != 1 {
		t.Fatalf("role %+v", r)
	}
	if len(r.Fits) != 2 || r.Fits[0].From != 25 || r.Fits[0].To != 100 || r.Fits[1].To != 300 {
		t.Fatalf("fits %+v", r.Fits)
	}
	if r.fitAt(10) != &r.Fits[0] || r.fitAt(100) != &r.Fits[0] || r.fitAt(150) != &r.Fits[1] || r.fitAt(1000) != &r.Fits[1] {
		t.Errorf("fitAt picks the wrong line")
	}
	low, high := r.Fits[0], r.Fits[1]
	// Idle by side: back's, front's less back's, the generator's.
	near(t, "idle, server", high.IdleCores.Server.V, 0.004, 1e-9)
	near(t, "idle, caller", high.IdleCores.Caller.V, 0.003, 1e-9)
	near(t, "idle, entry", high.IdleCores.Entry.V, 0.003, 1e-9)
	if i := high.IdleCores.Server; !(i.Lo < i.V && i.Hi > i.V) {
		t.Errorf("idle interval %+v does not hold its value", i)
	}
	near(t, "idle, server, low line", low.IdleCores.Server.V, 0.001, 1e-9)
	near(t, "idle, caller, low line", low.IdleCores.Caller.V, 0.003, 1e-9)
	near(t, "idle, entry, low line", low.IdleCores.Entry.V, 0, 1e-9)
	ref := high.costAt("http", "http", 1000)
	near(t, "server", ref.Server.V, 0.0002, 1e-9)
	near(t, "caller", ref.Caller.V, 0.0003, 1e-9)
	near(t, "entry", ref.Entry.V, 0.0001, 1e-9)
	near(t, "server at 8000 B", high.costAt("http", "http", 8000).Server.V, 0.0003, 1e-9)
	// The low line: the slope and every variant measured at 300 req/s
	// cost lowExtra more per request (the front side's receive and call
	// together, so the caller's share is the same).
	ref = low.costAt("http", "http", 1000)
	near(t, "server, low", ref.Server.V, 0.0002+lowExtra, 1e-9)
	near(t, "caller, low", ref.Caller.V, 0.0003, 1e-9)
	near(t, "entry, low", ref.Entry.V, 0.0001+lowExtra, 1e-9)
	near(t, "server at 8000 B, low", low.costAt("http", "http", 8000).Server.V, 0.0003+lowExtra, 1e-9)
	near(t, "mem at rest MiB", r.MemBytes.V/mib, 42, 1e-6)
	near(t, "mem per service MiB", r.MemPerService.V/mib, 1, 1e-6)
	near(t, "mem per connection KiB", r.MemPerConnection.V/1024, 4, 0.01)
	for _, c := range []struct {
		payload    int
		rate, want float64
	}{
		{1000, 300, 1}, {1000, 100, 1}, {1000, 25, 1.5}, {1000, 62.5, 1.25}, {8000, 300, 1},
		// 8000 B was measured at 300 req/s only: moved to 25 by the
		// reference's difference.
		{8000, 25, 1.5},
	} {
		h := m.hopAt("http", "http", c.payload, c.rate)
		near(t, fmt.Sprintf("hop p50 ms at %d B, %g req/s", c.payload, c.rate), h[0].Quantile(0.5), c.want, 0.01)
		near(t, fmt.Sprintf("hop p90 ms at %d B, %g req/s", c.payload, c.rate), h[0].Quantile(0.9), 1.4*c.want, 0.02)
	}
	base, _ := p.Mesh("baseline")
	if len(base.Roles) != 0 || len(base.Hops) != 0 || base.Parallel != nil {
		t.Errorf("baseline: %+v", base)
	}
	// The fan-out cell: with what a parallel call adds, the model gives
	// back the cell's own added latency, (fanMs - 1.2) ms times the
	// spread; as independent hops it reads it low.
	if m.Parallel == nil || m.Parallel.Rate != 100 {
		t.Fatalf("parallel: %+v", m.Parallel)
	}
	with := m.latency("http", fanGraph, 100, 0)
	for _, q := range []float64{0.5, 0.9} {
		want := (fanMs - 1.2) * (0.5 + q)
		near(t, fmt.Sprintf("fan-out added p%g ms", 100*q), with.Quantile(q), want, 0.02)
	}
	alone := *m
	alone.Parallel = nil
	if got := alone.latency("http", fanGraph, 100, 0).Quantile(0.5); got > 3.8-0.3 {
		t.Errorf("fan-out p50 as independent hops %.3f ms, want well below the measured 3.8", got)
	}
	// Its bounds give back the cell's bounds: around the estimate.
	lo, hi := m.latency("http", fanGraph, 100, 1).Quantile(0.5), m.latency("http", fanGraph, 100, 2).Quantile(0.5)
	if !(lo < with.Quantile(0.5) && hi > with.Quantile(0.5)) {
		t.Errorf("fan-out p50 bounds [%.3f, %.3f] around %.3f", lo, hi, with.Quantile(0.5))
	}
}

func TestExtractNeedsTheBaselineAndTwoRates(t *testing.T) {
	for _, c := range []struct {
		drop func(results.Summary) bool
		want string
	}{
		{func(s results.Summary) bool { return s.Mesh == "baseline" }, "no baseline cells"},
		{func(s results.Summary) bool { return s.ID == "sidecar_0" || s.ID == "sidecar_1" }, "needs cells at two rates or more"},
	} {
		dir := writeRun(t)
		ix, _ := results.ReadIndex(dir)
		var keep []results.Summary
		for _, s := range ix.Cells {
			if !c.drop(s) {
				keep = append(keep, s)
			}
		}
		ix.Cells = keep
		if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
			t.Fatal(err)
		}
		if _, err := Extract(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// TestExtractRefusesDamagedCells: predict reads a cell only when it is
// what the run wrote, as report does.
func TestExtractRefusesDamagedCells(t *testing.T) {
	t.Parallel()
	dir := writeRun(t)
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, ix.Cells[0].File), 10); err != nil {
		t.Fatal(err)
	}
	var de *results.DamagedError
	if _, err := Extract(dir); !errors.As(err, &de) || len(de.Cells) != 1 || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("Extract: %v, want the truncated cell named", err)
	}
}
