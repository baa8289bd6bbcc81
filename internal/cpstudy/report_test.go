package cpstudy

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/results"
)

// TestSummarizeBatchMeans: a minute of churn samples that alternate in
// blocks of ten (istiod pushing, then idle) gets a mean with an interval
// from the batch means, wider than samples taken as independent would
// give.
func TestSummarizeBatchMeans(t *testing.T) {
	var samples []Sample
	for i := range 60 {
		cpu := 0.2
		if i/10%2 == 1 {
			cpu = 0.6
		}
		samples = append(samples, Sample{Phase: "churn", CPUCores: cpu + 0.01*float64(i%3), WorkingSet: 1 << 30})
	}
	r := &Results{Study: Name, Points: []Point{{Mode: Sidecar, Pods: 10, Samples: samples}}}
	s := Summarize(r, cost.UnitPrices{PerVCPUMonth: 20, PerGBMonth: 3})[0]
	var naive []float64
	for _, x := range samples {
		naive = append(naive, x.CPUCores)
	}
	iid := analysis.MeanCI(naive)
	if math.Abs(s.CPU.Median-0.41) > 1e-9 || s.CPU.N != analysis.MaxBatches || s.CPU.Hi-s.CPU.Lo <= iid.Hi-iid.Lo {
		t.Errorf("churn CPU %+v, want the mean 0.41 over %d batches, wider than independent samples' %+v", s.CPU, analysis.MaxBatches, iid)
	}
}

func TestSummarizeComputesFromRawData(t *testing.T) {
	conv := func(v float64) *float64 { return &v }
	r := &Results{Study: Name, Config: Config{ChangeTimeout: 20 * time.Second}, Points: []Point{{
		Mode: Sidecar, Pods: 100, Services: 25, Proxies: 100,
		ConfigBytes: []int64{100, 200, 300, 400},
		Samples: []Sample{
			{Phase: "sync", CPUCores: 0.9, WorkingSet: 3 << 30},
			{Phase: "idle", CPUCores: 0.1, WorkingSet: 1 << 30},
			{Phase: "churn", CPUCores: 0.5, WorkingSet: 1 << 30},
			{Phase: "churn", CPUCores: 0.3, WorkingSet: 1 << 30},
			{Phase: "churn", CPUCores: 0.4, WorkingSet: 1 << 30},
		},
		Changes: []ChangeResult{
			{Affected: 10, Acked: 10, Converged: conv(0.2)},
			{Affected: 10, Acked: 10, Converged: conv(0.4)},
			{Affected: 10, Acked: 9},
			{Affected: 0}, // affects no proxy: not a change that counts
		},
		IstiodMetrics: map[string]Histogram{"pilot_xds_push_time": {Sum: 2, Count: 4}},
	}}}
	s := Summarize(r, cost.UnitPrices{PerVCPUMonth: 20, PerGBMonth: 3})[0]
	if math.Abs(s.CPU.Median-0.4) > 1e-12 || s.CPU.Interval() {
		t.Errorf("churn CPU %+v, want the mean 0.4 of three churn samples, too few for a batch-means interval", s.CPU)
	}
	if s.PeakGiB != 3 || s.Memory.Median != 1 {
		t.Errorf("peak %g GiB, working set %+v; want 3 and 1", s.PeakGiB, s.Memory)
	}
	// The change that timed out took at least the timeout: it is the
	// slowest of three, so the p99 is the timeout, a lower bound, and the
	// p50 the middle change, 0.4 s.
	if s.Changes != 3 || s.TimedOut != 1 || s.ConvergeP50 != 0.4 || s.ConvergeP50AtLeast || s.ConvergeP99 != 20 || !s.ConvergeP99AtLeast {
		t.Errorf("changes %d, timed out %d, p50 %g (at least: %v), p99 %g (at least: %v); want 3, 1, 0.4, 20 s at least",
			s.Changes, s.TimedOut, s.ConvergeP50, s.ConvergeP50AtLeast, s.ConvergeP99, s.ConvergeP99AtLeast)
	}
	if s.BytesP50 != 200 || s.BytesP99 != 400 {
		t.Errorf("config bytes p50 %g p99 %g, want 200 and 400", s.BytesP50, s.BytesP99)
	}
	if s.PushTimeMean != 0.5 || !math.IsNaN(float64(s.ConvergenceP99)) {
		t.Errorf("istiod push time mean %g, convergence p99 %g; want 0.5 and none", s.PushTimeMean, s.ConvergenceP99)
	}
	if want := 0.4*20 + 3*3.0; math.Abs(s.MonthlyUSD-want) > 1e-9 {
		t.Errorf("monthly $%g, want $%g", s.MonthlyUSD, want)
	}

	dir := t.TempDir()
	if err := results.WriteJSON(dir, ResultsFile, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| sidecar | 100 | 25 | 100 | 0.40 |") || !strings.Contains(string(md), "| ≥ 20.000 | 1/3 |") {
		t.Errorf("report.md lacks the point's row:\n%s", md)
	}
	for _, f := range []string{"cpu.svg", "memory.svg", "convergence.svg", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
