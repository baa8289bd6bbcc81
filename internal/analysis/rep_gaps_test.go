package analysis

import (
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
