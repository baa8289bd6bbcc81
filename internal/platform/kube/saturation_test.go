package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
)

// TestLoadNodeSaturation checks that saturation is judged per load node,
// every generator there counted: many generators each far below their own
// limit still saturate the node they share.
func TestLoadNodeSaturation(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gen := func(node, pod string, cores ...float64) metrics.Series {
		s := metrics.Series{Component: metrics.Component{Role: metrics.RoleLoad, Node: node, Namespace: "ns", Pod: pod, Container: jobContainer}}
		for i, c := range cores {
			s.Samples = append(s.Samples, metrics.Sample{Time: t0.Add(time.Duration(i) * 15 * time.Second), CPUCores: c})
		}
		return s
	}
	var series []metrics.Series
	for i := range 50 {
		series = append(series, gen("busy", "g"+itoa(i), 0.07, 0.09)) // 50 x 0.08 = 4 of 4 cores
	}
	series = append(series, gen("idle", "h", 0.5, 0.7), gen("gone", "x"), gen("app", "a", 3))
	alloc := map[string]float64{"busy": 4, "idle": 4, "gone": 4}
	nodes := loadNodeCPU(series, alloc)
	if len(nodes) != 2 || nodes[0].Node != "busy" || nodes[0].Containers != 50 || nodes[1].Node != "idle" {
		t.Fatalf("nodes = %+v, want busy (50 containers) and idle; gone has no samples, app is no load node", nodes)
	}
	if c := nodes[0].Cores; c < 3.99 || c > 4.01 {
		t.Errorf("busy node uses %.3f cores, want 4", c)
	}
	results := []jobResult{
		{Pod: &corev1.Pod{Spec: corev1.PodSpec{NodeName: "busy"}}, Result: &load.Result{}},
		{Pod: &corev1.Pod{Spec: corev1.PodSpec{NodeName: "idle"}}, Result: &load.Result{}},
	}
	markSaturatedNodes(results, nodes)
	if r := results[0].Result; !r.Distorted || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "load node busy CPU saturated: 100%") {
		t.Errorf("busy node's generator: distorted %v, warnings %q", r.Distorted, r.Warnings)
	}
	if r := results[1].Result; r.Distorted || len(r.Warnings) != 0 {
		t.Errorf("idle node's generator marked: %q", r.Warnings)
	}
}
