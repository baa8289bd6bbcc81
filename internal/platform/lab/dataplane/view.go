package dataplane

import (
	"net/netip"
	"sort"

	"github.com/meshbench/meshbench/internal/metrics"
)

// view indexes an inventory for the builders.
type view struct {
	Inventory
	podByIP map[netip.Addr]*Pod
	svcByNS map[string][]*Service
	nodes   map[string]*Node
}

func newView(inv Inventory) *view {
	v := &view{Inventory: inv, podByIP: map[netip.Addr]*Pod{}, svcByNS: map[string][]*Service{}, nodes: map[string]*Node{}}
	for i := range v.Pods {
		if !v.Pods[i].HostNetwork {
			v.podByIP[v.Pods[i].IP] = &v.Pods[i]
		}
	}
	for i := range v.Services {
		s := &v.Services[i]
		v.svcByNS[s.Namespace] = append(v.svcByNS[s.Namespace], s)
	}
	for i := range v.Nodes {
		v.nodes[v.Nodes[i].Name] = &v.Nodes[i]
	}
	return v
}

// meshable reports whether a pod joins the mesh: app pods and in-cluster
// load generators, never host-network pods.
func meshable(p Pod) bool {
	return !p.HostNetwork && (p.Role == metrics.RoleApp || p.Role == metrics.RoleLoad)
}

// meshedPods lists the pods that join the mesh, optionally on one node.
func (v *view) meshedPods(node string) []*Pod {
	var out []*Pod
	for i := range v.Pods {
		p := &v.Pods[i]
		if meshable(*p) && (node == "" || p.Node == node) {
			out = append(out, p)
		}
	}
	return out
}

// backends are the pods behind a Service's endpoints.
func (v *view) backends(s *Service) []*Pod {
	var out []*Pod
	for _, ep := range s.Endpoints {
		if p := v.podByIP[ep.Addr()]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// identities are the distinct SPIFFE IDs of pods, sorted.
func identities(pods []*Pod) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods {
		if id := p.Identity(); !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// service finds a Service by namespace and name.
func (v *view) service(ns, name string) *Service {
	for _, s := range v.svcByNS[ns] {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// loadPods are the in-cluster load generators.
func (v *view) loadPods() []*Pod {
	var out []*Pod
	for i := range v.Pods {
		if v.Pods[i].Role == metrics.RoleLoad && !v.Pods[i].HostNetwork {
			out = append(out, &v.Pods[i])
		}
	}
	return out
}

// callerPods are the pods the graph says call a Service: the backends of
// its caller services and, for an entry Service, the load generators.
func (v *view) callerPods(s *Service) []*Pod {
	var out []*Pod
	for _, c := range s.Callers {
		if cs := v.service(s.Namespace, c); cs != nil {
			out = append(out, v.backends(cs)...)
		}
	}
	if s.Entry {
		out = append(out, v.loadPods()...)
	}
	return out
}

// servicesOf lists the Services a pod backs.
func (v *view) servicesOf(p *Pod) []*Service {
	var out []*Service
	for _, s := range v.svcByNS[p.Namespace] {
		for _, ep := range s.Endpoints {
			if ep.Addr() == p.IP {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// podPorts are the distinct ports a pod serves Services on, sorted.
func (v *view) podPorts(p *Pod) []int {
	seen := map[int]bool{}
	var out []int
	for _, s := range v.svcByNS[p.Namespace] {
		for _, ep := range s.Endpoints {
			if ep.Addr() == p.IP && !seen[int(ep.Port())] {
				seen[int(ep.Port())] = true
				out = append(out, int(ep.Port()))
			}
		}
	}
	sort.Ints(out)
	return out
}
