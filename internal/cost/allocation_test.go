package cost

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/topology"
)

// smallNode offers exactly 1000m and 10Gi to pods.
var smallNode = MachineType{
	Name: "small", Provider: GKE, VCPU: 1, MemoryGiB: 12, MaxPods: 110, MonthlyUSD: 100,
	Allocatable: &Resources{MilliCPU: 1000, Bytes: 10 * GiB},
}

func TestAllocate(t *testing.T) {
	t.Parallel()
	w := Workload{Name: "w", Namespaces: 1, Pods: []Shape{cpuPods("app", 300, 5)}}
	daemon := func(milli int64) Footprint {
		return Footprint{Name: "ds", PerNode: []Component{{Name: "agent", Requests: Resources{MilliCPU: milli}}}}
	}
	tests := []struct {
		name      string
		machine   MachineType
		mesh      Footprint
		wantNodes int
		wantIdeal float64
		wantCPU   int64 // total requested, per-node pods included
		wantPct   float64
	}{
		{
			// 3 pods of 300m per node: 5 pods on 2 nodes.
			name: "no additions", machine: smallNode, mesh: Footprint{Name: "none"},
			wantNodes: 2, wantIdeal: 1.5, wantCPU: 1500, wantPct: 0,
		},
		{
			// A 200m DaemonSet leaves 800m: 2 pods a node, 3 nodes, and the
			// third node carries the DaemonSet too.
			name: "daemonset on every node, added ones included", machine: smallNode, mesh: daemon(200),
			wantNodes: 3, wantIdeal: 1500.0 / 800, wantCPU: 1500 + 3*200, wantPct: 50,
		},
		{
			// 100m leaves 900m: still 3 pods a node.
			name: "small daemonset", machine: smallNode, mesh: daemon(100),
			wantNodes: 2, wantIdeal: 1500.0 / 900, wantCPU: 1500 + 2*100, wantPct: 0,
		},
		{
			name: "sidecar on every pod", machine: smallNode,
			mesh:      Footprint{Name: "sc", Sidecar: &Component{Name: "proxy", Requests: Resources{MilliCPU: 200}}},
			wantNodes: 3, wantIdeal: 2.5, wantCPU: 2500, wantPct: 50,
		},
		{
			// Two pod slots a node: the baseline needs 3 nodes, and with one
			// slot taken by the DaemonSet every pod needs its own node.
			name:      "pod slots with a daemonset",
			machine:   func() MachineType { m := smallNode; m.MaxPods = 2; return m }(),
			mesh:      daemon(1),
			wantNodes: 5, wantIdeal: 1500.0 / 999, wantCPU: 1500 + 5, wantPct: 66.67,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows, err := Allocate(w, tc.machine, []Footprint{tc.mesh})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || rows[0].Mesh != mesh.ProfileBaseline {
				t.Fatalf("rows = %+v, want baseline then %s", rows, tc.mesh.Name)
			}
			r := rows[1]
			if r.Nodes != tc.wantNodes || !r.PackingOptimal || r.Requests.MilliCPU != tc.wantCPU || r.IncreasePct != tc.wantPct {
				t.Errorf("row = %+v, want %d nodes, %dm requested, +%v%%", r, tc.wantNodes, tc.wantCPU, tc.wantPct)
			}
			if r.IdealNodes != round(tc.wantIdeal, 3) || r.MonthlyCost != float64(tc.wantNodes)*100 {
				t.Errorf("ideal %v, cost %v; want %v and %v", r.IdealNodes, r.MonthlyCost, round(tc.wantIdeal, 3), tc.wantNodes*100)
			}
		})
	}
}

func TestAllocateErrors(t *testing.T) {
	t.Parallel()
	w := Workload{Name: "w", Namespaces: 1, Pods: []Shape{cpuPods("app", 300, 1)}}
	tests := []struct {
		name    string
		machine MachineType
		mesh    Footprint
		want    string
	}{
		{"daemonsets fill the node", smallNode, Footprint{Name: "fat", PerNode: []Component{{Name: "agent", Requests: Resources{MilliCPU: 1000}}}}, "leave no room"},
		{"pod larger than a node", smallNode, Footprint{Name: "sc", Sidecar: &Component{Name: "proxy", Requests: Resources{MilliCPU: 900}}}, "does not fit"},
		{"no allocatable", MachineType{Name: "tiny", Provider: GKE, VCPU: 1, MemoryGiB: 0.25}, Footprint{Name: "x"}, "nothing is left"},
	}
	for _, tc := range tests {
		_, err := Allocate(w, tc.machine, []Footprint{tc.mesh})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestWorkloadFromGraph(t *testing.T) {
	t.Parallel()
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	w, err := WorkloadFromGraph(g, 50)
	if err != nil {
		t.Fatal(err)
	}
	var total Resources
	pods := 0
	for _, s := range w.Pods {
		total = total.Add(s.Requests.Times(s.Count * w.Namespaces))
		pods += s.Count * w.Namespaces
	}
	// The study's baseline: 200 pods, 140 cores and 100,000 MiB ("100 GB").
	if pods != 200 || total.MilliCPU != 140000 || total.Bytes != 100000*MiB {
		t.Fatalf("tiered x 50 = %d pods, %v; want 200 pods, 140 / 100000Mi", pods, total)
	}
	if _, err := WorkloadFromGraph(g, 0); err == nil {
		t.Fatal("0 namespaces: no error")
	}
}

// The study's inputs, packed: 11 pods of 700m fill a 7910m node, so the
// baseline needs 19 nodes (18 hold 198); sidecars make pods 950m, 8 a node,
// 25 full nodes and a 26th for istiod; ztunnel and istio-cni leave 7610m,
// 10 pods a node, 20 nodes with room for istiod and the waypoints.
func TestAllocateSoloStudy(t *testing.T) {
	t.Parallel()
	cat, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	e, err := EstimateAllocation(Options{Example: "solo-2024"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"baseline": 19, "sidecar": 26, "ambient": 20, "ambient-waypoint": 20, "linkerd": 23}
	for _, r := range e.Rows {
		if r.Nodes != want[r.Mesh] || !r.PackingOptimal {
			t.Errorf("%s: %d nodes (optimal %v), want %d", r.Mesh, r.Nodes, r.PackingOptimal, want[r.Mesh])
		}
	}
	if len(e.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(e.Rows), len(want))
	}
	if sc := e.Rows[1]; sc.IncreasePct != 36.84 || sc.PublishedIncreasePct == nil || *sc.PublishedIncreasePct != 36 {
		t.Errorf("sidecar: +%v%% (published %v), want +36.84%% against the study's 36", sc.IncreasePct, sc.PublishedIncreasePct)
	}
}

func TestRowJSONWithoutABaselineCost(t *testing.T) {
	t.Parallel()
	// Pods that request nothing: the baseline's ideal cost is zero, so
	// the mesh's ideal increase over it is infinite, which JSON writes as
	// null; a finite row keeps its number.
	w := Workload{Name: "w", Namespaces: 1, Pods: []Shape{{Name: "app", Count: 3}}}
	mesh := Footprint{Name: "mesh", Sidecar: &Component{Name: "proxy", Requests: Resources{MilliCPU: 100}}}
	rows, err := Allocate(w, smallNode, []Footprint{mesh})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"ideal_increase_pct":null`) || !strings.Contains(s, `"increase_pct":0,`) {
		t.Fatalf("JSON = %s, want a null ideal increase and a zero increase", s)
	}
	var out strings.Builder
	if err := (&AllocationEstimate{Rows: rows}).Write(&out, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "n/a") || strings.Contains(out.String(), "Inf") {
		t.Fatalf("text:\n%s\nwant n/a for the ideal increase", out.String())
	}
}
