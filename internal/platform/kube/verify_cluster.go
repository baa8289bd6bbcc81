package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// clusterChecks are the checks that need more than the pods: namespace
// labels, node proxies and Cilium's state.
func (p *kubePlatform) clusterChecks(ctx context.Context, pr profile, pods []corev1.Pod) ([]mesh.Check, error) {
	var checks []mesh.Check
	switch pr.Plane {
	case mesh.PlaneNodeProxy:
		c, err := p.namespaceLabelCheck(ctx, labelDataplane, "ambient")
		if err != nil {
			return nil, err
		}
		checks = append(checks, c)
		agents, err := p.readyPodNodes(ctx, istioNamespace, "app=ztunnel")
		if err != nil {
			return nil, err
		}
		checks = append(checks, nodeAgentCheck("ztunnel-on-app-nodes", "ztunnel", pods, agents))
	case mesh.PlaneCNI:
		agents, err := p.readyPodNodes(ctx, ciliumNamespace, "k8s-app=cilium")
		if err != nil {
			return nil, err
		}
		checks = append(checks, nodeAgentCheck("cilium-on-app-nodes", "cilium agent", pods, agents))
		spire, err := p.readyPodNodes(ctx, spireNamespace, "app=spire-agent")
		if err != nil {
			return nil, err
		}
		checks = append(checks, nodeAgentCheck("spire-agent-on-app-nodes", "SPIRE agent", pods, spire))
		why, err := p.ciliumReady(ctx)
		if err != nil {
			return nil, err
		}
		ma := mesh.Check{Name: "mutual-auth-enabled", Pass: why == "",
			Detail: "cilium-config has WireGuard and SPIRE mutual authentication on; every workload policy requires it"}
		if why != "" {
			ma.Detail = why
		}
		checks = append(checks, ma)
		c, err := p.ciliumEndpointCheck(ctx, pods)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c)
		c, err = p.wireguardCheck(ctx, pods)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c)
	}
	if pr.Waypoint {
		c, err := p.waypointCheck(ctx)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// namespaceLabelCheck passes when every workload namespace has the label.
func (p *kubePlatform) namespaceLabelCheck(ctx context.Context, key, value string) (mesh.Check, error) {
	var bad []string
	for _, ns := range p.namespaces {
		n, err := p.c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return mesh.Check{}, fmt.Errorf("namespace %s: %w", ns, err)
		}
		if n.Labels[key] != value {
			bad = append(bad, ns)
		}
	}
	c := mesh.Check{Name: "namespaces-labelled", Pass: len(bad) == 0,
		Detail: fmt.Sprintf("%d namespaces have %s=%s", len(p.namespaces)-len(bad), key, value)}
	if len(bad) > 0 {
		c.Detail = "without " + key + "=" + value + ": " + strings.Join(firstN(bad, 5), ", ")
	}
	return c, nil
}

// readyPodNodes returns the nodes that run a ready pod matching selector.
func (p *kubePlatform) readyPodNodes(ctx context.Context, ns, selector string) (map[string]bool, error) {
	list, err := p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list %s pods: %w", selector, err)
	}
	nodes := map[string]bool{}
	for i := range list.Items {
		if podReady(&list.Items[i]) {
			nodes[list.Items[i].Spec.NodeName] = true
		}
	}
	return nodes, nil
}

// nodeAgentCheck passes when every node running an app pod runs a ready
// agent (ztunnel, Cilium).
func nodeAgentCheck(name, agent string, pods []corev1.Pod, agents map[string]bool) mesh.Check {
	need := map[string]bool{}
	for _, pod := range pods {
		need[pod.Spec.NodeName] = true
	}
	var bad []string
	for n := range need {
		if !agents[n] {
			bad = append(bad, n)
		}
	}
	sort.Strings(bad)
	c := mesh.Check{Name: name, Pass: len(bad) == 0 && len(need) > 0,
		Detail: fmt.Sprintf("a ready %s on each of %d app nodes", agent, len(need))}
	if len(bad) > 0 {
		c.Detail = fmt.Sprintf("no ready %s on app nodes %s", agent, strings.Join(firstN(bad, 5), ", "))
	}
	return c
}

// waypointCheck passes when every namespace's waypoint is programmed.
func (p *kubePlatform) waypointCheck(ctx context.Context) (mesh.Check, error) {
	var bad []string
	for _, ns := range p.namespaces {
		ri, err := p.c.resourceFor(gatewayGVK, ns)
		if err != nil {
			return mesh.Check{}, err
		}
		g, err := ri.Get(ctx, waypointName, metav1.GetOptions{})
		if err != nil || !conditionTrue(g.Object, "Programmed") {
			bad = append(bad, ns)
		}
	}
	c := mesh.Check{Name: "waypoints-programmed", Pass: len(bad) == 0,
		Detail: fmt.Sprintf("a programmed waypoint in each of %d namespaces", len(p.namespaces))}
	if len(bad) > 0 {
		c.Detail = "no programmed waypoint in " + strings.Join(firstN(bad, 5), ", ")
	}
	return c, nil
}

var ciliumEndpointGVK = schema.GroupVersionKind{Group: "cilium.io", Version: "v2", Kind: "CiliumEndpoint"}

// ciliumEndpointCheck passes when Cilium manages every app pod: each has
// a CiliumEndpoint of its name.
func (p *kubePlatform) ciliumEndpointCheck(ctx context.Context, pods []corev1.Pod) (mesh.Check, error) {
	have := map[string]bool{}
	for _, ns := range p.namespaces {
		ri, err := p.c.resourceFor(ciliumEndpointGVK, ns)
		if err != nil {
			return mesh.Check{}, err
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return mesh.Check{}, fmt.Errorf("list cilium endpoints: %w", err)
		}
		for _, e := range list.Items {
			have[ns+"/"+e.GetName()] = true
		}
	}
	return podCheck("cilium-endpoints", "every app pod has a CiliumEndpoint", pods, func(pod *corev1.Pod) bool {
		return have[pod.Namespace+"/"+pod.Name]
	}), nil
}

// wireguardCheck passes when every app node has published its WireGuard
// key, which the Cilium agent does once node encryption is up.
func (p *kubePlatform) wireguardCheck(ctx context.Context, pods []corev1.Pod) (mesh.Check, error) {
	need := map[string]bool{}
	for _, pod := range pods {
		need[pod.Spec.NodeName] = true
	}
	var bad []string
	for n := range need {
		node, err := p.c.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return mesh.Check{}, fmt.Errorf("node %s: %w", n, err)
		}
		if node.Annotations[annotWireGuardKey] == "" {
			bad = append(bad, n)
		}
	}
	sort.Strings(bad)
	c := mesh.Check{Name: "wireguard", Pass: len(bad) == 0, Detail: fmt.Sprintf("WireGuard up on %d app nodes", len(need))}
	if len(bad) > 0 {
		c.Detail = "no WireGuard key (" + annotWireGuardKey + ") on nodes " + strings.Join(firstN(bad, 5), ", ")
	}
	return c, nil
}
