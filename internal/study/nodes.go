package study

import (
	"runtime"
	"strconv"

	"github.com/meshbench/meshbench/internal/platform"
)

// DefaultLabNodes is the lab's cluster when a study names no nodes: one
// node per role, and a client node outside the cluster for the ingress
// path. With two or more CPUs the load generators and the outside client
// are pinned to CPU 0 and the application (with its proxies) to the
// others, so that the generators do not take the cycles of what they
// measure; the mesh node (ingress gateway) floats.
func DefaultLabNodes() []platform.NodeSpec {
	nodes := []platform.NodeSpec{
		{Name: "app", Role: platform.NodeApp},
		{Name: "load", Role: platform.NodeLoad},
		{Name: "mesh", Role: platform.NodeMesh},
		{Name: "client", Role: platform.NodeClient},
	}
	switch n := runtime.NumCPU(); {
	case n == 2:
		nodes[0].CPUs, nodes[1].CPUs, nodes[3].CPUs = "1", "0", "0"
	case n > 2:
		nodes[0].CPUs, nodes[1].CPUs, nodes[3].CPUs = "1-"+strconv.Itoa(n-1), "0", "0"
	}
	return nodes
}
