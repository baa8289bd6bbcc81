package analysis

import (
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestCompareClosedLoopGatesOnThroughput: the fixture's cells are a
// closed loop (32 connections, no rate), whose latency is connections
// over throughput (Little's law). Comparing two runs of it must show no
// added latency anywhere, and its gate must judge each mesh's throughput
// (higher is better) beside its CPU figure instead: the sidecar completing
// 30% fewer requests a second in B is a regression of its throughput.
func TestCompareClosedLoopGatesOnThroughput(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1})
	b := loadWritten(t, resultstest.Options{Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 1 / 0.7}})
	main := cfg(32, 4)
	if !b.Group(resultstest.Baseline, main).ClosedLoop() {
		t.Fatalf("the fixture at %s is not a closed loop", main.Label())
	}
	c, r := gateAt(a, b, main)
	for _, ch := range c.Changes {
		if ch.Added {
			t.Errorf("%s: a closed loop compared on added latency (%+v)", ch, ch.Diff.Delta)
		}
	}
	family := map[string]int{}
	for _, ch := range c.Changes {
		if ch.Gated {
			family[ch.Name()]++
			if ch.Mesh == b.Baseline && ch.Metric == QPS {
				t.Errorf("%s is in the family: the baseline has no overhead for its throughput to stand in for", ch)
			}
		}
	}
	// Two meshes with overheads (sidecar, ambient): their throughput
	// stands in for added p50 and p99.
	if family[string(QPS)] != len(b.Meshes)-1 || family[string(CPUPerAppCPU)] == 0 {
		t.Errorf("gate family %v, want the throughput of the %d meshes with an overhead and CPU per app CPU", family, len(b.Meshes)-1)
	}
	var qps bool
	for _, reg := range r.Regressions {
		if reg.Mesh != resultstest.Sidecar {
			t.Errorf("%s regressed (%+v); only the sidecar slowed", reg, reg.Diff)
		}
		if reg.Mesh == resultstest.Sidecar && reg.Metric == QPS {
			qps = true
			if reg.Diff.Pct.Median > -20 {
				t.Errorf("sidecar throughput %+.1f%%, want about -30%%", reg.Diff.Pct.Median)
			}
		}
	}
	if !qps {
		t.Errorf("the sidecar's 30%% throughput drop is not a regression; regressions %v", r.Regressions)
	}
	// Noise alone fails nothing.
	if _, r := gateAt(a, loadWritten(t, resultstest.Options{Seed: 3}), main); len(r.Regressions) != 0 {
		t.Errorf("noise alone: regressions %v", r.Regressions)
	}
}

// TestCompareOpenLoopKeepsAddedLatency: an open loop's latency is the
// mesh's own cost, and its added p50 and p99 stay in the comparison and
// the gate's family.
func TestCompareOpenLoopKeepsAddedLatency(t *testing.T) {
	t.Parallel()
	a := loadWritten(t, resultstest.Options{Seed: 1, Rate: 100})
	b := loadWritten(t, resultstest.Options{Seed: 2, Rate: 100})
	c, _ := gateAt(a, b, cfg(32, 4))
	family := map[string]int{}
	for _, ch := range c.Changes {
		if ch.Gated {
			family[ch.Name()]++
		}
	}
	if family[AddedPrefix+string(P50)] == 0 || family[AddedPrefix+string(P99)] == 0 || family[string(QPS)] != 0 {
		t.Errorf("open-loop gate family %v, want added p50 and p99, no throughput", family)
	}
}
