package cluster

import (
	"testing"

	"github.com/meshbench/meshbench/internal/resources"
)

func TestCgroupValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		r      resources.Requirements
		shares uint64
		weight uint64
		quota  int64
	}{
		{name: "best effort", r: resources.Requirements{}, shares: 2, weight: 1, quota: -1},
		{name: "request only", r: resources.Requirements{CPURequestMilli: 100}, shares: 102, weight: 4, quota: -1},
		{name: "guaranteed 700m", r: resources.Requirements{CPURequestMilli: 700, CPULimitMilli: 700}, shares: 716, weight: 28, quota: 70000},
		{name: "limit defaults request", r: resources.Requirements{CPULimitMilli: 500}, shares: 512, weight: 20, quota: 50000},
		{name: "one core", r: resources.Requirements{CPURequestMilli: 1000}, shares: 1024, weight: 39, quota: -1},
		{name: "tiny limit floored", r: resources.Requirements{CPULimitMilli: 5}, shares: 5, weight: 1, quota: 1000},
		{name: "huge request capped", r: resources.Requirements{CPURequestMilli: 1 << 30}, shares: 262144, weight: 10000, quota: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuShares(tt.r); got != tt.shares {
				t.Errorf("shares = %d, want %d", got, tt.shares)
			}
			if got := cpuWeight(tt.r); got != tt.weight {
				t.Errorf("weight = %d, want %d", got, tt.weight)
			}
			if got := cpuQuotaUS(tt.r); got != tt.quota {
				t.Errorf("quota = %d, want %d", got, tt.quota)
			}
		})
	}
}

func TestEffectiveResources(t *testing.T) {
	t.Parallel()
	r := resources.Requirements{CPULimitMilli: 200, MemLimitBytes: 64 << 20}.Effective()
	if r.CPURequestMilli != 200 || r.MemRequestBytes != 64<<20 {
		t.Errorf("effective = %+v, want requests equal to limits", r)
	}
}

func TestWorkingSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		usage, inactive uint64
		want            int64
	}{
		{name: "usage less inactive file", usage: 100, inactive: 30, want: 70},
		{name: "never negative", usage: 10, inactive: 30, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workingSet(tt.usage, tt.inactive); got != tt.want {
				t.Errorf("workingSet = %d, want %d", got, tt.want)
			}
		})
	}
}
