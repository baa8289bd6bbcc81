package kube

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/topology"
)

// probeServiceAccount is the identity of the policy probe: meshed, but
// allowed nowhere, so that an L4 policy must refuse it.
const probeServiceAccount = "meshbench-probe"

// deniedPathPrefix is what the L7 policies deny their allowed callers, as
// on the lab: the L7 rule ALLOWs the callers' identities on every path
// but /admin/ and below (docs/studies.md, "Mesh profiles").
const deniedPathPrefix = "/admin/"

// principal is a workload's SPIFFE identity as Istio policies name it.
func principal(ns, sa string) string {
	return fmt.Sprintf("cluster.local/ns/%s/sa/%s", ns, sa)
}

// callers returns, for each service, the identities allowed to call it:
// the services that call it in the graph, and the load generators for
// the entry service. It is the Solo.io study's policy: tier-1 only from
// the load generators, tier-2 only from tier-1, and so on.
func callers(ns string, g *topology.Graph, ingress bool) map[string][]any {
	sets := map[string]map[string]bool{}
	add := func(svc, sa string) {
		if sets[svc] == nil {
			sets[svc] = map[string]bool{}
		}
		sets[svc][principal(ns, sa)] = true
	}
	add(g.Entry, loadServiceAccount)
	if ingress {
		sets[g.Entry][principal(istioNamespace, ingressAccount)] = true
	}
	for _, s := range g.Services {
		for _, callee := range g.Calls(s.Name) {
			add(callee, s.ServiceAccount)
		}
	}
	out := map[string][]any{}
	for svc, set := range sets {
		var ps []string
		for p := range set {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		for _, p := range ps {
			out[svc] = append(out[svc], p)
		}
	}
	return out
}

// authorizationPolicies returns one ALLOW policy per service when the
// profile has policies. L4 policies select the service's pods and name
// only identities, so that ztunnel enforces them. L7 policies also deny
// every path under deniedPathPrefix; a waypoint enforces them when attached to the
// Service, a sidecar when they select the pods.
func authorizationPolicies(ns string, g *topology.Graph, pr profile, ingress bool) []*unstructured.Unstructured {
	if !pr.L4Policy && !pr.L7Policy {
		return nil
	}
	allowed := callers(ns, g, ingress)
	var out []*unstructured.Unstructured
	for _, s := range g.Services {
		rule := map[string]any{"from": []any{map[string]any{"source": map[string]any{"principals": allowed[s.Name]}}}}
		if allowed[s.Name] == nil {
			// Nobody calls it: an ALLOW policy with no rules denies all.
			rule = nil
		}
		if rule != nil && pr.L7Policy {
			rule["to"] = []any{map[string]any{"operation": map[string]any{
				"paths": []any{"/*"}, "notPaths": []any{deniedPathPrefix + "*"},
			}}}
		}
		spec := map[string]any{"action": "ALLOW"}
		if rule != nil {
			spec["rules"] = []any{rule}
		}
		if pr.Waypoint {
			spec["targetRefs"] = []any{map[string]any{"kind": "Service", "group": "", "name": s.Name}}
		} else {
			spec["selector"] = map[string]any{"matchLabels": map[string]any{labelApp: s.Name}}
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
			"metadata": meshMeta(ns, "meshbench-"+s.Name),
			"spec":     spec,
		}})
	}
	return out
}
