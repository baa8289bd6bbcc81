package cluster

import (
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// A load from 0 to 2.05 s, sampled every 0.5 s, and the short sample Stop
// takes at 2.1 s, mostly after the load: the window keeps the four full
// samples and leaves the short one out, which read as a full interval
// would be centred at 1.85 s, inside it. A window reaching past 2.05 s
// keeps it.
func TestWindowReadsEachSamplesOwnInterval(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var xs []metrics.Sample
	for _, s := range []float64{0.5, 1, 1.5, 2, 2.1} {
		cpu := 0.1
		if s == 2.1 {
			cpu = 0.01
		}
		xs = append(xs, metrics.Sample{Time: at(s), CPUCores: cpu})
	}
	s := &Sampler{interval: 500 * time.Millisecond, tracks: map[string]*track{"c": {series: metrics.Series{Samples: xs}}}}
	got := s.Window(at(0), at(2.05))
	if len(got) != 1 || len(got[0].Samples) != 4 || got[0].MeanCPU() != 0.1 {
		t.Fatalf("window to 2.05 s: %+v", got)
	}
	if got := s.Window(at(0), at(2.1)); len(got[0].Samples) != 5 {
		t.Errorf("window to 2.1 s keeps %d samples, want 5", len(got[0].Samples))
	}
	if got := s.Window(at(0.3), at(2.05)); len(got[0].Samples) != 3 {
		t.Errorf("window from 0.3 s keeps %d samples, want 3 (the first is centred at 0.25 s)", len(got[0].Samples))
	}
}
