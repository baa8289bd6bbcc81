package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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
// to 5000 RPS and 10 nodes (CPU by the rate, ztunnel memory by the nodes).
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
		f.projCores, f.projGiB = f.cores/f.rate*5000, (bytes-nodeBytes)/(1<<30)
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
	if err := Run(&out, Options{ResultsDir: dir, ProjectRPS: 5000, ProjectNodes: 10, Output: "json"}); err != nil {
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
