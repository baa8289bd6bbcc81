package cost

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestDeriveUnitPrices(t *testing.T) {
	t.Parallel()
	m := func(name string, vcpu int, gib, usd float64) MachineType {
		return MachineType{Name: name, Provider: GKE, VCPU: vcpu, MemoryGiB: gib, MaxPods: 110, MonthlyUSD: usd}
	}
	// The Istio blog's figures: n2-standard-4 (4 CPU, 16 GB)
	// $141, n2-highmem-4 (4, 32) $191, n2-highmem-2 (2, 16) $95.
	std4, hm4, hm2 := m("n2-standard-4", 4, 16, 141), m("n2-highmem-4", 4, 32, 191), m("n2-highmem-2", 2, 16, 95)
	tests := []struct {
		name            string
		cpuPair         [2]MachineType
		memPair         [2]MachineType
		wantCPU, wantGB float64
		wantErr         string
	}{
		{
			// The blog: "1 CPU costs $23/month". It gives 1 GB as $3.33, but
			// ($191 - $141) / (32 - 16) GB is $3.125: it divided by 15.
			name: "istio blog", cpuPair: [2]MachineType{std4, hm2}, memPair: [2]MachineType{hm4, std4},
			wantCPU: 23, wantGB: 3.125,
		},
		{name: "pair order does not matter", cpuPair: [2]MachineType{hm2, std4}, memPair: [2]MachineType{std4, hm4}, wantCPU: 23, wantGB: 3.125},
		{name: "cpu pair differs in memory", cpuPair: [2]MachineType{std4, hm4}, memPair: [2]MachineType{hm4, std4}, wantErr: "same memory"},
		{name: "memory pair differs in cpu", cpuPair: [2]MachineType{std4, hm2}, memPair: [2]MachineType{hm2, std4}, wantErr: "same vCPUs"},
		{
			name: "bigger is cheaper", cpuPair: [2]MachineType{std4, m("odd", 2, 16, 200)}, memPair: [2]MachineType{hm4, std4},
			wantErr: "must cost more",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := DeriveUnitPrices(tc.cpuPair, tc.memPair)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(p.PerVCPUMonth, tc.wantCPU) || !near(p.PerGBMonth, tc.wantGB) {
				t.Fatalf("prices = %+v, want $%v per vCPU and $%v per GB", p, tc.wantCPU, tc.wantGB)
			}
		})
	}
}

func TestConsumption(t *testing.T) {
	t.Parallel()
	prices := UnitPrices{PerVCPUMonth: 23, PerGBMonth: 3}
	usages := []Usage{
		{
			Mesh: "ambient", RequestRate: 1000, Nodes: 4,
			Components: []ComponentUsage{
				{Role: metrics.RoleNodeProxy, Instances: 4, CPUCores: 0.5, MemoryBytes: float64(GiB)},
				{Role: metrics.RoleWaypoint, Instances: 2, CPUCores: 2, MemoryBytes: float64(4 * GiB)},
				{Role: metrics.RoleApp, Instances: 8, CPUCores: 9, MemoryBytes: float64(9 * GiB)},          // not data plane
				{Role: metrics.RoleControlPlane, Instances: 1, CPUCores: 1, MemoryBytes: float64(2 * GiB)}, // not data plane
			},
		},
		{Mesh: "baseline", RequestRate: 1000},
	}
	rows, err := Consumption(usages, prices, &Projection{RequestRate: 4000, Nodes: 8})
	if err != nil {
		t.Fatal(err)
	}
	a := rows[0]
	// 2.5 cores x $23 + 5 GB x $3.
	if !near(a.CPUCores, 2.5) || !near(a.MemoryGB, 5) || !near(a.MonthlyCost, 72.5) || !near(a.CPUPer1000RPS, 2.5) {
		t.Errorf("ambient = %+v, want 2.5 cores, 5 GB, $72.50, 2.5 cores per 1000 RPS", a)
	}
	// 4x the rate: 10 cores; 8 nodes of ztunnel at 0.25 GB each plus the
	// waypoints' 4 GB: 6 GB. 10 x 23 + 6 x 3 = 248.
	if p := a.Projected; p == nil || !near(p.CPUCores, 10) || !near(p.MemoryGB, 6) || !near(p.MonthlyCost, 248) {
		t.Errorf("ambient projected = %+v, want 10 cores, 6 GB, $248", a.Projected)
	}
	if b := rows[1]; b.MonthlyCost != 0 || b.CPUPer1000RPS != 0 {
		t.Errorf("baseline = %+v, want nothing", b)
	}

	for _, tc := range []struct {
		name string
		u    Usage
		want string
	}{
		{"no rate", Usage{Mesh: "x"}, "request_rate_rps"},
		{"no nodes", Usage{Mesh: "x", RequestRate: 1, Components: []ComponentUsage{{Role: metrics.RoleNodeProxy, MemoryBytes: 1}}}, "nodes"},
	} {
		if _, err := Consumption([]Usage{tc.u}, prices, &Projection{RequestRate: 1, Nodes: 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestConsumptionProjectsOnlyWhatIsGiven(t *testing.T) {
	t.Parallel()
	prices := UnitPrices{PerVCPUMonth: 20, PerGBMonth: 2}
	u := Usage{Mesh: "ambient", RequestRate: 1000, Nodes: 2, Components: []ComponentUsage{
		{Role: metrics.RoleNodeProxy, Instances: 2, CPUCores: 1, MemoryBytes: float64(2 * GiB)},
		{Role: metrics.RoleWaypoint, Instances: 1, CPUCores: 1, MemoryBytes: float64(GiB)},
	}}
	tests := []struct {
		name        string
		proj        Projection
		cores, gibs float64
	}{
		// A rate alone scales the CPU and keeps the measured memory.
		{name: "rate", proj: Projection{RequestRate: 3000}, cores: 6, gibs: 3},
		// Nodes alone scale node-proxy memory and keep the measured CPU.
		{name: "nodes", proj: Projection{Nodes: 10}, cores: 2, gibs: 10 + 1},
		{name: "both", proj: Projection{RequestRate: 500, Nodes: 1}, cores: 1, gibs: 1 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows, err := Consumption([]Usage{u}, prices, &tc.proj)
			if err != nil {
				t.Fatal(err)
			}
			if p := rows[0].Projected; p == nil || !near(p.CPUCores, tc.cores) || !near(p.MemoryGB, tc.gibs) || !near(p.MonthlyCost, 20*tc.cores+2*tc.gibs) {
				t.Fatalf("projected = %+v, want %g cores and %g GB", p, tc.cores, tc.gibs)
			}
		})
	}
}

func TestDefaultUnitPrices(t *testing.T) {
	t.Parallel()
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := DefaultUnitPrices(c)
	if err != nil {
		t.Fatal(err)
	}
	// The catalog's list prices: ($141.79 - $95.64) / 2 vCPU and
	// ($191.28 - $141.79) / 16 GB, the same as `meshbench cost` derives.
	if !near(p.PerVCPUMonth, (141.79-95.64)/2) || !near(p.PerGBMonth, (191.28-141.79)/16) {
		t.Fatalf("prices = %+v", p)
	}
	derived, err := unitPrices(Options{}, c)
	if err != nil || derived != p {
		t.Fatalf("unitPrices without options = %+v, %v; want %+v", derived, err, p)
	}
}

func TestUsageFromSeries(t *testing.T) {
	t.Parallel()
	now := time.Now()
	series := func(role metrics.Role, cores ...float64) metrics.Series {
		s := metrics.Series{Component: metrics.Component{Role: role}}
		for i, c := range cores {
			s.Samples = append(s.Samples, metrics.Sample{Time: now.Add(time.Duration(i) * time.Second), CPUCores: c, WorkingSet: int64(c * 1000)})
		}
		return s
	}
	u := UsageFromSeries("sidecar", 450, 3, []metrics.Series{
		series(metrics.RoleSidecar, 0.1, 0.3),  // mean 0.2
		series(metrics.RoleSidecar, 0.4),       // mean 0.4
		series(metrics.RoleControlPlane, 1, 3), // mean 2
	})
	if u.Mesh != "sidecar" || u.RequestRate != 450 || u.Nodes != 3 || len(u.Components) != 2 {
		t.Fatalf("usage = %+v", u)
	}
	cp, sc := u.Components[0], u.Components[1] // sorted by role
	if sc.Role != metrics.RoleSidecar || sc.Instances != 2 || !near(sc.CPUCores, 0.6) || !near(sc.MemoryBytes, 600) {
		t.Errorf("sidecars = %+v, want 2 instances, 0.6 cores, 600 bytes", sc)
	}
	if cp.Role != metrics.RoleControlPlane || !near(cp.CPUCores, 2) {
		t.Errorf("control plane = %+v", cp)
	}
}

func TestPerMillionRequests(t *testing.T) {
	p := UnitPrices{PerVCPUMonth: 23, PerGBMonth: 3.33}
	// 1 core and 1 GB for the 1e6/500 = 2000 s a million requests take at
	// 500 req/s: (23 + 3.33) / (730 x 3600) x 2000.
	want := (23 + 3.33) / (730 * 3600.0) * 2000
	if got := p.PerMillionRequests(1, 1, 500); !near(got, want) {
		t.Errorf("got %g, want %g", got, want)
	}
	if got := p.PerMillionRequests(1, 1, 0); got != 0 {
		t.Errorf("at no rate: %g, want 0", got)
	}
}

// The average cores per 1000 req/s is labelled as what it is, so that idle
// CPU over a low rate is not read as a marginal cost.
func TestConsumptionSaysAverageIsNotMarginal(t *testing.T) {
	e := &ConsumptionEstimate{Prices: UnitPrices{PerVCPUMonth: 23, PerGBMonth: 3}, Rows: []ConsumptionRow{{Mesh: "sidecar", CPUCores: 0.168, CPUPer1000RPS: 6.04}}}
	var b strings.Builder
	if err := e.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CORES/1000 RPS AT RUN RATE", "6.040", "not the marginal cost", "idle part plus a per-request part"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// The control plane is priced apart from the data plane, at the same unit
// prices, and left out of the data plane's figures.
func TestConsumptionControlPlaneApart(t *testing.T) {
	p := UnitPrices{PerVCPUMonth: 20, PerGBMonth: 3}
	u := Usage{Mesh: "sidecar-istiod", RequestRate: 100, Components: []ComponentUsage{
		{Role: metrics.RoleSidecar, Instances: 4, CPUCores: 0.2, MemoryBytes: float64(GiB)},
		{Role: metrics.RoleControlPlane, Instances: 1, CPUCores: 0.05, MemoryBytes: float64(GiB) / 2},
	}}
	rows, err := Consumption([]Usage{u, {Mesh: "sidecar", RequestRate: 100, Components: u.Components[:1]}}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.CPUCores != 0.2 || r.MemoryGB != 1 || r.ControlPlane == nil ||
		r.ControlPlane.CPUCores != 0.05 || r.ControlPlane.MemoryGB != 0.5 || r.ControlPlane.MonthlyCost != 0.05*20+0.5*3 {
		t.Errorf("with istiod: %+v (control plane %+v)", r, r.ControlPlane)
	}
	if rows[1].ControlPlane != nil {
		t.Errorf("without a control plane: %+v", rows[1].ControlPlane)
	}
}
