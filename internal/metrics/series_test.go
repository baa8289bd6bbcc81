package metrics

import (
	"testing"
	"time"
)

func TestSeriesAggregates(t *testing.T) {
	t.Parallel()
	now := time.Now()
	s := Series{Samples: []Sample{
		{Time: now, CPUCores: 0.5, WorkingSet: 100},
		{Time: now.Add(time.Second), CPUCores: 1.5, WorkingSet: 300},
	}}
	if got := s.MeanCPU(); got != 1 {
		t.Errorf("MeanCPU = %v, want 1", got)
	}
	if got := s.MeanMemory(); got != 200 {
		t.Errorf("MeanMemory = %v, want 200", got)
	}
	if got := s.PeakMemory(); got != 300 {
		t.Errorf("PeakMemory = %v, want 300", got)
	}
	var empty Series
	if empty.MeanCPU() != 0 || empty.MeanMemory() != 0 || empty.PeakMemory() != 0 {
		t.Error("an empty series must aggregate to zero")
	}
}

func TestDataPlaneRoles(t *testing.T) {
	t.Parallel()
	for _, r := range []Role{RoleSidecar, RoleNodeProxy, RoleWaypoint} {
		if !r.DataPlane() {
			t.Errorf("%s should be data plane", r)
		}
	}
	for _, r := range []Role{RoleApp, RoleIngress, RoleControlPlane, RoleCNI, RoleLoad} {
		if r.DataPlane() {
			t.Errorf("%s should not be data plane", r)
		}
	}
}
