package analysis

import (
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

func TestMinRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m    Metric
		want int64
	}{{P50, 20}, {P90, 100}, {P95, 200}, {P99, 1000}, {P999, 10000}, {QPS, 0}, {MaxLatency, 0}}
	for _, tt := range tests {
		if got := tt.m.MinRequests(); got != tt.want {
			t.Errorf("%s needs %d requests, want %d", tt.m, got, tt.want)
		}
	}
}

// TestGroupHidesPercentilesBeyondItsSample checks that a percentile
// appears exactly when every repetition holds it (see
// TestTailGuardIsPerRepetition for runs that pool enough but hold too
// few each).
func TestGroupHidesPercentilesBeyondItsSample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		perRep    int64
		p99, p999 bool
	}{
		{"277 requests a run, as quick once measured", 277, false, false},
		{"3 runs of 1,000 hold p99", 1000, true, false},
		{"3 runs of 10,000 hold p99.9", 10_000, true, true},
	}
	for _, tt := range tests {
		g := &Group{}
		for i := range 3 {
			h := metrics.NewHistogram()
			h.RecordN(time.Duration(i+1)*time.Millisecond, tt.perRep)
			r := &Rep{Values: map[Metric]float64{P50: float64(i + 1), P99: float64(i + 1), P999: float64(i + 1), QPS: 10}}
			g.add(r, h)
		}
		if got := g.Supports(P99); got != tt.p99 || (len(g.Values(P99)) > 0) != tt.p99 || g.Estimate(P99).Valid() != tt.p99 {
			t.Errorf("%s: p99 shown %v, want %v", tt.name, got, tt.p99)
		}
		if got := g.Supports(P999); got != tt.p999 || (len(g.Values(P999)) > 0) != tt.p999 {
			t.Errorf("%s: p99.9 shown %v, want %v", tt.name, got, tt.p999)
		}
		if len(g.Values(P50)) != 3 || len(g.Values(QPS)) != 3 {
			t.Errorf("%s: p50 and QPS must always be there", tt.name)
		}
	}
}
