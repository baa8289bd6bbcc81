package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// The fixture's last configuration, the one --results prices.
var pricedParams = map[string]string{"connections": "128", "replicas.productpage": "4"}

func priced(s results.Summary) bool {
	return s.Params["connections"] == pricedParams["connections"] && s.Params["replicas.productpage"] == pricedParams["replicas.productpage"]
}

// writeResults writes the analysis fixture and marks one priced sidecar
// cell distorted, so that skipping is seen where it matters.
func writeResults(t *testing.T) (dir, distorted string, cells int) {
	t.Helper()
	dir = t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ix.Cells {
		if s.Mesh == resultstest.Sidecar && priced(s) && s.Repetition == 2 {
			ix.Cells[i].Status, ix.Cells[i].Reason = results.StatusDistorted, "generator fell short of its rate"
			distorted = s.ID
		}
	}
	if distorted == "" {
		t.Fatal("the fixture has no sidecar cell at the priced configuration")
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	return dir, distorted, len(ix.Cells)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// cellFigures are one cell's figures recomputed straight from its cell
// file: data-plane CPU and memory as the samples' means, summed, priced at
// vcpu and gb a month, over the completed requests a second, and projected
// to 10 nodes (ztunnel memory by the nodes, the CPU as measured).
type cellFigures struct {
	cores, gib, monthly, per1000, rate, projCores, projGiB, projMonthly float64
}

// recompute gives each mesh's figures: the median of each over the cells
// the index calls ok at the priced configuration.
func recompute(t *testing.T, dir string, vcpu, gb float64) map[string]cellFigures {
	t.Helper()
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]cellFigures{}
	for _, s := range ix.Cells {
		if !priced(s) || s.Status != results.StatusOK {
			continue
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		var cores, bytes, nodeBytes float64
		nodes := map[string]bool{}
		for _, r := range c.Resources {
			if r.Component.Role != metrics.RoleSidecar && r.Component.Role != metrics.RoleNodeProxy {
				continue
			}
			var cpu, mem float64
			for _, x := range r.Samples {
				cpu += x.CPUCores
				mem += float64(x.WorkingSet)
			}
			cores += cpu / float64(len(r.Samples))
			bytes += mem / float64(len(r.Samples))
			if r.Component.Role == metrics.RoleNodeProxy {
				nodeBytes += mem / float64(len(r.Samples))
				nodes[r.Component.Node] = true
			}
		}
		f := cellFigures{cores: cores, gib: bytes / (1 << 30), rate: float64(s.Requests) / s.End.Sub(s.Start).Seconds()}
		f.monthly, f.per1000 = f.cores*vcpu+f.gib*gb, f.cores/(f.rate/1000)
		f.projCores, f.projGiB = f.cores, (bytes-nodeBytes)/(1<<30)
		if len(nodes) > 0 {
			f.projGiB += nodeBytes / float64(len(nodes)) * 10 / (1 << 30)
		}
		f.projMonthly = f.projCores*vcpu + f.projGiB*gb
		per[s.Mesh] = append(per[s.Mesh], f)
	}
	out := map[string]cellFigures{}
	for mesh, fs := range per {
		values := func(get func(cellFigures) float64) []float64 {
			var xs []float64
			for _, f := range fs {
				xs = append(xs, get(f))
			}
			return xs
		}
		// Costs are priced at the mean over the cells; the rate is their
		// median.
		m := func(get func(cellFigures) float64) float64 {
			var sum float64
			for _, x := range values(get) {
				sum += x
			}
			return sum / float64(len(fs))
		}
		out[mesh] = cellFigures{
			cores: m(func(f cellFigures) float64 { return f.cores }), gib: m(func(f cellFigures) float64 { return f.gib }),
			monthly: m(func(f cellFigures) float64 { return f.monthly }), per1000: m(func(f cellFigures) float64 { return f.per1000 }),
			rate: median(values(func(f cellFigures) float64 { return f.rate })), projCores: m(func(f cellFigures) float64 { return f.projCores }),
			projGiB: m(func(f cellFigures) float64 { return f.projGiB }), projMonthly: m(func(f cellFigures) float64 { return f.projMonthly }),
		}
	}
	return out
}

func TestRunResultsMatchesCellFiles(t *testing.T) {
	t.Parallel()
	dir, distorted, cells := writeResults(t)
	var out bytes.Buffer
	if err := Run(&out, Options{ResultsDir: dir, ProjectNodes: 10, Output: "json"}); err != nil {
		t.Fatal(err)
	}
	var e ResultsEstimate
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Skipped) != 1 || e.Skipped[0].ID != distorted || e.Skipped[0].Kind != results.StatusDistorted {
		t.Errorf("skipped = %+v, want only %s, distorted", e.Skipped, distorted)
	}
	// The fixture's own distorted and failed cells lie elsewhere in the sweep.
	if e.StudySkipped != 3 || e.StudyCells != cells {
		t.Errorf("study-wide %d of %d cells skipped, want 3 of %d", e.StudySkipped, e.StudyCells, cells)
	}

	// The catalog's n2 list prices by the Istio blog's pairs.
	vcpu, gb := (141.79-95.64)/2, (191.28-141.79)/16
	want := recompute(t, dir, vcpu, gb)
	if len(e.Consumption.Rows) != 3 || len(want) != 3 {
		t.Fatalf("rows = %+v, recomputed %d meshes", e.Consumption.Rows, len(want))
	}
	for _, r := range e.Consumption.Rows {
		x := want[r.Mesh]
		if !approx(r.CPUCores, x.cores) || !approx(r.MemoryGB, x.gib) {
			t.Errorf("%s: %.6f cores, %.6f GB; cell files give %.6f, %.6f", r.Mesh, r.CPUCores, r.MemoryGB, x.cores, x.gib)
		}
		if !approx(r.MonthlyCost, x.monthly) {
			t.Errorf("%s: $%.6f a month, cell files give $%.6f", r.Mesh, r.MonthlyCost, x.monthly)
		}
		if !approx(r.CPUPer1000RPS, x.per1000) {
			t.Errorf("%s: %.6f cores per 1000 RPS, cell files give %.6f", r.Mesh, r.CPUPer1000RPS, x.per1000)
		}
		if p := r.Projected; p == nil || !approx(p.CPUCores, x.projCores) || !approx(p.MemoryGB, x.projGiB) || !approx(p.MonthlyCost, x.projMonthly) {
			t.Errorf("%s: projected %+v, cell files give %.6f cores, %.6f GB, $%.6f", r.Mesh, p, x.projCores, x.projGiB, x.projMonthly)
		}
	}
	if r := e.Consumption.Rows[0]; r.Mesh != resultstest.Baseline || r.CPUCores != 0 {
		t.Errorf("first row = %+v, want the baseline with no data plane", r)
	}
	for _, m := range e.Meshes {
		if wantUsable := map[bool]int{true: 5, false: 6}[m.Mesh == resultstest.Sidecar]; m.Usable != wantUsable || !approx(m.RequestRate, want[m.Mesh].rate) {
			t.Errorf("%+v: want %d usable cells at %.3f RPS", m, wantUsable, want[m.Mesh].rate)
		}
	}

	// By requests: nine application pods that request nothing; the
	// fixture's sidecars ask 100m / 128Mi each (the load job's is not
	// counted), istiod 500m / 2Gi, and ztunnel and istio-cni 200m / 512Mi
	// and 100m / 100Mi on every node.
	rows := e.Allocation.Rows
	if len(rows) != 3 || rows[0].Mesh != resultstest.Baseline || rows[1].Mesh != resultstest.Ambient || rows[2].Mesh != resultstest.Sidecar {
		t.Fatalf("allocation rows = %+v", rows)
	}
	const mi = int64(1) << 20
	for _, tc := range []struct {
		row  Row
		want Resources
	}{
		{rows[0], Resources{}},
		{rows[1], Resources{MilliCPU: 500 + 300*int64(rows[1].Nodes), Bytes: 2048*mi + 612*mi*int64(rows[1].Nodes)}},
		{rows[2], Resources{MilliCPU: 9*100 + 500, Bytes: 9*128*mi + 2048*mi}},
	} {
		if tc.row.Requests != tc.want || tc.row.Pods != map[bool]int{true: 9, false: 10}[tc.row.Mesh == resultstest.Baseline] {
			t.Errorf("%s: %v in %d pods, want %v", tc.row.Mesh, tc.row.Requests, tc.row.Pods, tc.want)
		}
	}
	if rows[2].Machine != DefaultNode || rows[2].Nodes != 1 {
		t.Errorf("sidecar: %d x %s, want 1 x %s", rows[2].Nodes, rows[2].Machine, DefaultNode)
	}
}

func TestRunResultsText(t *testing.T) {
	t.Parallel()
	dir, distorted, cells := writeResults(t)
	var out bytes.Buffer
	if err := Run(&out, Options{ResultsDir: dir, Node: "n2-standard-4", VCPUMonth: 20, GBMonth: 2}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"at connections=128, replicas.productpage=4",
		"skipped " + distorted + " (istio-sidecar): distorted: generator fell short of its rate",
		fmt.Sprintf("Study-wide, 3 of %d cells are skipped", cells),
		"$20.00 per vCPU-month, $2.00 per GB-month (given)",
		"packed onto n2-standard-4 (gke)",
		"    sidecar: 100m / 128Mi on 9 application pods",
		"    istiod: 500m / 2Gi x 1 per cluster",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// withCapacity adds the capacity fixture's searches to the results in
// dir, as a study with cells and a search (quick) records both: its
// trials' cells, and the index's capacity entries beside the cells.
func withCapacity(t *testing.T, dir string) {
	t.Helper()
	study, err := os.ReadFile(filepath.Join(dir, results.StudyFile))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	searches, err := resultstest.WriteCapacity(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix.Capacity = searches.Capacity
	if err := results.WriteFile(dir, results.StudyFile, study); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
}

// capacityMesh is the capacity fixture's mesh of that name.
func capacityMesh(t *testing.T, name string) resultstest.CapacityMesh {
	t.Helper()
	for _, m := range resultstest.CapacityMeshes {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("the capacity fixture has no mesh %s", name)
	return resultstest.CapacityMesh{}
}

// --rps projects the data plane's CPU by the split its capacity search
// fitted, idle cores plus cores per request a second times the rate, not
// its whole CPU scaled with the rate; beyond the measured capacity only
// with --extrapolate (issue 44: 5000 req/s, 28 times the sidecar's
// capacity, priced without a word).
func TestRunResultsProjectsByTheFit(t *testing.T) {
	t.Parallel()
	dir, _, _ := writeResults(t)
	withCapacity(t, dir)
	const vcpu, gb = 20.0, 2.0
	project := func(rps float64, extrapolate bool) (*ResultsEstimate, error) {
		var out bytes.Buffer
		err := Run(&out, Options{ResultsDir: dir, ProjectRPS: rps, Extrapolate: extrapolate, VCPUMonth: vcpu, GBMonth: gb, Output: "json"})
		if err != nil {
			return nil, err
		}
		var e ResultsEstimate
		if err := json.Unmarshal(out.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		return &e, nil
	}
	check := func(e *ResultsEstimate, rps float64, extrapolated bool) {
		t.Helper()
		if len(e.Consumption.Rows) != 3 {
			t.Fatalf("rows = %+v", e.Consumption.Rows)
		}
		for _, r := range e.Consumption.Rows {
			m := capacityMesh(t, r.Mesh)
			want := m.ProxyIdle + m.ProxyPerRPS*rps // the baseline has none
			p := r.Projected
			if p == nil || math.Abs(p.CPUCores-want) > 1e-9 {
				t.Errorf("%s at %g req/s: projected %+v, want %.6f cores (its fit: %g idle + %g per req/s)", r.Mesh, rps, p, want, m.ProxyIdle, m.ProxyPerRPS)
				continue
			}
			if !approx(p.MemoryGB, r.MemoryGB) || !approx(p.MonthlyCost, p.CPUCores*vcpu+p.MemoryGB*gb) {
				t.Errorf("%s: projected %+v; want the measured %.6f GB, priced", r.Mesh, p, r.MemoryGB)
			}
			f := r.ProjectedFrom
			if m.ProxyRole == "" {
				if f != nil {
					t.Errorf("%s has no data plane, yet projects from %+v", r.Mesh, f)
				}
				continue
			}
			if f == nil || math.Abs(f.IdleCores-m.ProxyIdle) > 1e-9 || math.Abs(f.CoresPerRPS-m.ProxyPerRPS) > 1e-12 ||
				f.CapacityRPS != m.Capacity || f.Extrapolated != extrapolated || f.Trials < 2 {
				t.Errorf("%s: projected from %+v; want idle %g, %g per req/s, capacity %g, extrapolated %t", r.Mesh, f, m.ProxyIdle, m.ProxyPerRPS, m.Capacity, extrapolated)
			}
		}
	}
	e, err := project(150, false)
	if err != nil {
		t.Fatal(err)
	}
	check(e, 150, false)

	if _, err := project(5000, false); err == nil || !strings.Contains(err.Error(), "--extrapolate") ||
		!strings.Contains(err.Error(), resultstest.Sidecar+" (200 req/s)") || !strings.Contains(err.Error(), resultstest.Ambient+" (300 req/s)") {
		t.Errorf("--rps 5000, beyond every capacity: %v; want a refusal naming each mesh's capacity and --extrapolate", err)
	}
	if e, err = project(5000, true); err != nil {
		t.Fatal(err)
	}
	check(e, 5000, true)

	var text bytes.Buffer
	if err := Run(&text, Options{ResultsDir: dir, ProjectRPS: 5000, Extrapolate: true, VCPUMonth: vcpu, GBMonth: gb}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		resultstest.Sidecar + ": 0.100 idle cores + 3.000 cores per 1000 req/s",
		"extrapolated beyond its measured capacity, 200 req/s (--extrapolate)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// Results without a capacity search have no idle and per-request split:
// --rps is refused, saying why and what would have one, rather than the
// idle-inclusive CPU scaled with the rate.
func TestRunResultsRefusesProjectionWithoutFit(t *testing.T) {
	t.Parallel()
	dir, _, _ := writeResults(t)
	err := Run(io.Discard, Options{ResultsDir: dir, ProjectRPS: 5000})
	if err == nil || !strings.Contains(err.Error(), "idle and per-request") || !strings.Contains(err.Error(), "capacity search") {
		t.Errorf("--rps on results without a fit: %v; want it refused, naming the missing split", err)
	}
	if err := Run(io.Discard, Options{ResultsDir: dir, ProjectNodes: 10}); err != nil {
		t.Errorf("--nodes alone, which needs no fit: %v", err)
	}
	if err := Run(io.Discard, Options{ResultsDir: dir, Extrapolate: true}); err == nil || !strings.Contains(err.Error(), "--extrapolate") {
		t.Errorf("--extrapolate without --rps: %v; want it refused", err)
	}
}
