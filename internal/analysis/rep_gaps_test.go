package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// TestRepCountsGapsAndNamespaceLatency checks that a run's figures carry
// its resource gaps and its per-namespace latencies from the cell file.
func TestRepCountsGapsAndNamespaceLatency(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := metrics.NewHistogram()
	h.Record(time.Millisecond)
	gap := metrics.Gap{From: t0, To: t0.Add(time.Minute)}
	c := &cellFile{
		Summary: results.Summary{NamespaceLatencyMs: &results.Latency{P50: 1.5, P95: 2.5, P99: 3.5}},
		Merged:  &mergedResult{Start: t0, End: t0.Add(2 * time.Minute), Requests: 1, Latency: h},
		Resources: []metrics.Series{
			{Component: metrics.Component{Role: metrics.RoleApp}, Gaps: []metrics.Gap{gap, gap}},
			{Component: metrics.Component{Role: metrics.RoleSidecar}, Gaps: []metrics.Gap{gap}},
			{Component: metrics.Component{Role: metrics.RoleLoad}},
		},
	}
	r := newRep(c, nil)
	if r.Gaps != 3 {
		t.Errorf("gaps = %d, want 3", r.Gaps)
	}
	if r.Values[NamespaceP50] != 1.5 || r.Values[NamespaceP95] != 2.5 || r.Values[NamespaceP99] != 3.5 {
		t.Errorf("per-namespace values %v", r.Values)
	}
	if _, ok := newRep(&cellFile{Merged: c.Merged}, nil).Values[NamespaceP50]; ok {
		t.Error("a run with one generator has per-namespace figures")
	}
}

// TestCPUPerAppCPU: a cell's data-plane cores over its app's, the same
// at any host speed: a cell whose every component took twice the CPU
// time (a slower host) has twice the CPU per request and the same ratio;
// a cell whose app used no CPU has none.
func TestCPUPerAppCPU(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := metrics.NewHistogram()
	h.RecordN(time.Millisecond, 1000)
	series := func(role metrics.Role, cores float64) metrics.Series {
		return metrics.Series{Component: metrics.Component{Role: role}, Samples: []metrics.Sample{{Time: t0, CPUCores: cores}, {Time: t0.Add(time.Second), CPUCores: cores}}}
	}
	cell := func(slow float64, app float64) *Rep {
		return newRep(&cellFile{
			Merged:    &mergedResult{Start: t0, End: t0.Add(10 * time.Second), Requests: 1000, Latency: h},
			Resources: []metrics.Series{series(metrics.RoleApp, app*slow), series(metrics.RoleSidecar, 0.2*slow), series(metrics.RoleSidecar, 0.1*slow)},
		}, nil)
	}
	fast, slow := cell(1, 0.05), cell(2, 0.05)
	if fast.Values[CPUPerRequest] <= 0 || math.Abs(slow.Values[CPUPerRequest]-2*fast.Values[CPUPerRequest]) > 1e-9 {
		t.Fatalf("CPU per request %g fast, %g slow; want twice", fast.Values[CPUPerRequest], slow.Values[CPUPerRequest])
	}
	for _, r := range []*Rep{fast, slow} {
		if got := r.Values[CPUPerAppCPU]; math.Abs(got-6) > 1e-9 {
			t.Errorf("CPU per app CPU %g, want 0.3/0.05 = 6 at any speed", got)
		}
	}
	if _, ok := cell(1, 0).Values[CPUPerAppCPU]; ok {
		t.Error("a cell whose app used no CPU has a CPU per app CPU")
	}
}
