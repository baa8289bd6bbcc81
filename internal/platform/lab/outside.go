package lab

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// CheckOutsideClient is the verification check that the ingress path's
// clients are outside the mesh.
const CheckOutsideClient = "ingress-client-unmeshed"

// checkOutsideClients verifies that every namespace's outside client, where
// the ingress path's generators run, is outside the mesh: a host-network
// pod (on its node's network, where no mesh captures traffic), on a node
// that is not an app node, with no proxy among its containers.
func checkOutsideClients(l *cluster.Lab, namespaces []string) mesh.Check {
	roles := map[string]string{}
	for _, n := range l.Nodes() {
		roles[n.Name] = n.Role
	}
	var failures []string
	var where string
	for _, ns := range namespaces {
		p, ok := l.Pod(ns, OutsidePodName)
		if !ok {
			failures = append(failures, ns+": no "+OutsidePodName+" pod")
			continue
		}
		if !p.HostNetwork {
			failures = append(failures, fmt.Sprintf("%s: %s has its own pod network, which a mesh captures", ns, p.Name))
		}
		if roles[p.Node] == string(infra.NodeApp) {
			failures = append(failures, fmt.Sprintf("%s: %s runs on app node %s", ns, p.Name, p.Node))
		}
		for _, c := range p.Containers {
			if c.Role.DataPlane() || c.Role == metrics.RoleIngress {
				failures = append(failures, fmt.Sprintf("%s: %s has proxy container %s", ns, p.Name, c.Name))
			}
		}
		if where == "" {
			where = fmt.Sprintf("on node %s (role %s) at %s, host network", p.Node, roles[p.Node], p.IP)
		}
	}
	if len(failures) > 0 {
		return mesh.Check{Name: CheckOutsideClient, Detail: fmt.Sprintf("%d of %d namespaces: %v", len(failures), len(namespaces), failures)}
	}
	return mesh.Check{Name: CheckOutsideClient, Pass: true,
		Detail: fmt.Sprintf("%d of %d namespaces' ingress clients are outside the mesh: %s, no proxy", len(namespaces), len(namespaces), where)}
}
