package results

import (
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
)

func TestNoisy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    *infra.HostCPU
		want bool
	}{
		{"not measured", nil, false},
		{"quiet", &infra.HostCPU{Noise: 0.01}, false},
		{"at the threshold", &infra.HostCPU{Noise: DefaultNoiseThreshold}, false},
		{"a hog", &infra.HostCPU{Noise: 0.7}, true},
		{"CPUs a little slower", &infra.HostCPU{Noise: 0.01, Slowdown: 0.05}, false},
		{"CPUs much slower, no counter moved", &infra.HostCPU{Noise: 0.01, Slowdown: 0.4}, true},
	}
	for _, tt := range tests {
		if got := Noisy(tt.h, DefaultNoiseThreshold); got != tt.want {
			t.Errorf("%s: noisy %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNoiseReason(t *testing.T) {
	t.Parallel()
	n := 0.02
	s := Summary{HostNoise: &n, HostSlowdown: 0.42, Noisy: true}
	if got, want := s.NoiseReason(), "0.02 cores of host noise, the CPUs 42% slower than at their fastest in the run"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	s.HostSlowdown = 0.03 // within the limit: not a reason
	if got, want := s.NoiseReason(), "0.02 cores of host noise"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
}

func TestLoadNodeSaturated(t *testing.T) {
	t.Parallel()
	node := func(cpus int, busy float64) *infra.HostCPU {
		return &infra.HostCPU{Nodes: []infra.NodeCPU{
			{Name: "app", Role: infra.NodeApp, CPUs: 1, Busy: 1},
			{Name: "load", Role: infra.NodeLoad, CPUs: cpus, Busy: busy},
		}}
	}
	tests := []struct {
		name string
		h    *infra.HostCPU
		want bool
	}{
		{"not measured", nil, false},
		{"one generator, headroom", node(1, 0.4), false},
		// Each of 50 generators uses 2% of a CPU, far below any
		// per-process limit; together they fill the node.
		{"50 generators sharing one CPU", node(1, 50*0.0195), true},
		{"the same on two CPUs", node(2, 50*0.0195), false},
		{"the ingress path's client node counts too", &infra.HostCPU{Nodes: []infra.NodeCPU{{Role: infra.NodeLoad, CPUs: 1, Busy: 0.1}, {Role: infra.NodeClient, CPUs: 1, Busy: 0.95}}}, true},
		{"a full app node is not the load node's problem", &infra.HostCPU{Nodes: []infra.NodeCPU{{Role: infra.NodeApp, CPUs: 1, Busy: 1}}}, false},
	}
	for _, tt := range tests {
		why, got := LoadNodeSaturated(tt.h)
		if got != tt.want || (got && !strings.Contains(why, "load node")) {
			t.Errorf("%s: saturated %v (%s), want %v", tt.name, got, why, tt.want)
		}
	}
}

func TestClosedLoopShortfall(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	result := func(rate float64, conns int, qps float64, lat time.Duration) load.Result {
		h := metrics.NewHistogram()
		h.RecordN(lat, 1000)
		return load.Result{Options: load.Options{Rate: rate, Connections: conns}, Start: start, End: start.Add(10 * time.Second),
			Latency: h, AchievedRate: qps}
	}
	tests := []struct {
		name string
		r    load.Result
		want bool
	}{
		// Little's law: 150 req/s x 0.4 s = 60 of 64 connections busy.
		{"saturated service", result(0, 64, 150, 400*time.Millisecond), false},
		{"generator idle between replies", result(0, 64, 150, 200*time.Millisecond), true},
		{"open loop is checked by the engine", result(100, 64, 50, time.Millisecond), false},
	}
	for _, tt := range tests {
		why, got := ClosedLoopShortfall(tt.r)
		if got != tt.want || (got && !strings.Contains(why, "of its 64 connections")) {
			t.Errorf("%s: shortfall %v (%s), want %v", tt.name, got, why, tt.want)
		}
	}
}

func TestPreferredAttempt(t *testing.T) {
	t.Parallel()
	quiet := Summary{Status: StatusOK, Attempt: 1}
	noisy := Summary{Status: StatusOK, Noisy: true, Attempt: 2}
	failed := Summary{Status: StatusFailed, Attempt: 3}
	later := Summary{Status: StatusOK, Noisy: true, Attempt: 3}
	for _, tt := range []struct {
		name string
		a, b Summary
		want bool
	}{
		{"quiet over a later noisy one", quiet, noisy, true},
		{"noisy not over quiet", noisy, quiet, false},
		{"a measurement over a later failure", noisy, failed, true},
		{"a failure not over a measurement", failed, noisy, false},
		{"of two noisy ones, the later", later, noisy, true},
	} {
		if got := PreferredAttempt(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
}
