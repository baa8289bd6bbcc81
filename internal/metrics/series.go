package metrics

import (
	"time"

	"github.com/meshbench/meshbench/internal/resources"
)

// Role is what a measured component does, the grouping every report uses.
type Role string

// The component roles, the same on every platform.
const (
	RoleApp          Role = "app"
	RoleSidecar      Role = "sidecar"
	RoleNodeProxy    Role = "node-proxy" // ambient's ztunnel
	RoleWaypoint     Role = "waypoint"
	RoleIngress      Role = "ingress"
	RoleControlPlane Role = "control-plane"
	RoleCNI          Role = "cni"
	RoleLoad         Role = "load"
)

// DataPlane reports whether the role belongs to the mesh's data plane.
func (r Role) DataPlane() bool {
	return r == RoleSidecar || r == RoleNodeProxy || r == RoleWaypoint
}

// Component names one measured container.
type Component struct {
	Role      Role   `json:"role"`
	Node      string `json:"node"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Requirements are the container's requests and limits; embedded, so
	// that they write as fields of the component.
	resources.Requirements
}

// Sample is one resource reading. CPU is the average rate in cores since the
// previous sample; memory is the working set (usage minus inactive file), as
// cAdvisor reports it.
type Sample struct {
	Time       time.Time `json:"t"`
	CPUCores   float64   `json:"cpu_cores"`
	WorkingSet int64     `json:"working_set_bytes"`
}

// Series is one component's samples over a measurement window.
type Series struct {
	Component Component `json:"component"`
	Samples   []Sample  `json:"samples"`
	// Gaps are spans of the window the source has no reading for (a
	// missed scrape, a source that was down): left out of Samples, never
	// read as zero.
	Gaps []Gap `json:"gaps,omitempty"`
}

// Gap is a span of a window without readings.
type Gap struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// MeanCPU is the mean CPU in cores over the samples.
func (s Series) MeanCPU() float64 {
	if len(s.Samples) == 0 {
		return 0
	}
	var sum float64
	for _, x := range s.Samples {
		sum += x.CPUCores
	}
	return sum / float64(len(s.Samples))
}

// MeanMemory is the mean working set in bytes over the samples.
func (s Series) MeanMemory() float64 {
	if len(s.Samples) == 0 {
		return 0
	}
	var sum float64
	for _, x := range s.Samples {
		sum += float64(x.WorkingSet)
	}
	return sum / float64(len(s.Samples))
}

// PeakMemory is the largest working set in the samples.
func (s Series) PeakMemory() int64 {
	var m int64
	for _, x := range s.Samples {
		m = max(m, x.WorkingSet)
	}
	return m
}
