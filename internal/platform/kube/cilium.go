package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/platform"
)

const (
	ciliumNamespace = "kube-system"
	// annotWireGuardKey is the node annotation the Cilium agent sets when
	// WireGuard encryption is up on that node.
	annotWireGuardKey = "network.cilium.io/wg-pub-key"
)

// ciliumPlan installs Cilium as the bookinfo study's earlier report ran
// it: WireGuard node-to-node encryption and mutual authentication through
// SPIRE, required by a policy in every workload namespace. Cilium is the
// cluster's CNI: a study must run it on a cluster set up for it (its chart
// values, such as k8sServiceHost, come from the study's overrides).
func (p *kubePlatform) ciliumPlan(pl meshPlan) (meshPlan, error) {
	sel, tol := placementValues(p.place(platform.NodeMesh))
	pl.Releases = []helmRelease{{Chart: platform.ChartCilium, Name: "cilium", Namespace: ciliumNamespace, Values: map[string]any{
		"encryption": map[string]any{"enabled": true, "type": "wireguard"},
		"authentication": map[string]any{"mutual": map[string]any{"spire": map[string]any{
			"enabled": true, "install": map[string]any{"enabled": true},
		}}},
		"operator": map[string]any{"nodeSelector": sel, "tolerations": tol},
	}}}
	for _, ns := range p.namespaces {
		// Ingress only from the namespace's own endpoints, each connection
		// mutually authenticated.
		pl.Objects = append(pl.Objects, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": meshMeta(ns, "meshbench-mutual-auth"),
			"spec": map[string]any{
				"endpointSelector": map[string]any{},
				"ingress": []any{map[string]any{
					"fromEndpoints":  []any{map[string]any{}},
					"authentication": map[string]any{"mode": "required"},
				}},
			},
		}})
	}
	return pl, nil
}
