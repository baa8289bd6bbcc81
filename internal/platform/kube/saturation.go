package kube

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/metrics"
)

// nodeSaturated is the share of a load node's allocatable CPU above which
// the load side, not the mesh, may have set a cell's figures: the same
// threshold a generator applies to its own process.
const nodeSaturated = 0.9

// nodeCPU is the measured CPU of one load node over a window.
type nodeCPU struct {
	Node        string
	Cores       float64 // summed mean use of every container measured there
	Allocatable float64 // the node's allocatable cores
	Containers  int
}

// loadNodeCPU sums, per node in nodes, the mean CPU of every measured
// container on it over the window (generators, their proxies, anything
// else sampled there), so that fifty generators on one node count as one
// load. A node with no samples is left out: it cannot be judged.
func loadNodeCPU(series []metrics.Series, allocatable map[string]float64) []nodeCPU {
	by := map[string]*nodeCPU{}
	for _, s := range series {
		alloc, ok := allocatable[s.Component.Node]
		if !ok || len(s.Samples) == 0 {
			continue
		}
		n := by[s.Component.Node]
		if n == nil {
			n = &nodeCPU{Node: s.Component.Node, Allocatable: alloc}
			by[s.Component.Node] = n
		}
		n.Cores += s.MeanCPU()
		n.Containers++
	}
	out := make([]nodeCPU, 0, len(by))
	for _, n := range by {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// markSaturatedNodes marks every generator that ran on a saturated load
// node as distorted, saying why.
func markSaturatedNodes(results []jobResult, nodes []nodeCPU) {
	for _, n := range nodes {
		if n.Allocatable <= 0 || n.Cores/n.Allocatable <= nodeSaturated {
			continue
		}
		warn := fmt.Sprintf("load node %s CPU saturated: %.0f%% of its %g allocatable cores, summed over the %d containers measured there; the load side, not the mesh, may have set these figures",
			n.Node, 100*n.Cores/n.Allocatable, n.Allocatable, n.Containers)
		for i := range results {
			if results[i].Pod.Spec.NodeName == n.Node {
				r := results[i].Result
				r.Distorted = true
				r.Warnings = append(r.Warnings, warn)
			}
		}
	}
}

// generatorNodes returns the allocatable cores of the nodes the
// generators ran on.
func (p *kubePlatform) generatorNodes(ctx context.Context, results []jobResult) (map[string]float64, error) {
	out := map[string]float64{}
	for _, r := range results {
		name := r.Pod.Spec.NodeName
		if _, ok := out[name]; ok || name == "" {
			continue
		}
		n, err := p.c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("load node %s: %w", name, err)
		}
		out[name] = n.Status.Allocatable.Cpu().AsApproximateFloat64()
	}
	return out, nil
}
