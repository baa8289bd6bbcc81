package kube

import "github.com/meshbench/meshbench/internal/mesh"

// installer is how Kubernetes installs one mesh family: a new mesh adds
// its registry entry, one installer here and the file that plans it.
type installer struct {
	// plan adds the family's charts, namespace labels and objects to a
	// plan.
	plan func(p *kubePlatform, pl meshPlan) (meshPlan, error)
	// charts are the chart keys a profile of the family installs, its
	// ingress gateway's included when ingress is set.
	charts func(pr profile, ingress bool) []string
	// ownIngress says the family's charts install its ingress gateway;
	// otherwise meshbench applies the plain one, with ingressAnnotations
	// on its pods.
	ownIngress         bool
	ingressAnnotations map[string]string
	// watched are namespaces outside the plan's whose pods are the mesh's
	// (those of a CNI the cluster brought), measured with it.
	watched []string
}

// installers are the families Kubernetes installs, by name.
var installers = map[string]installer{
	mesh.Istio: {plan: (*kubePlatform).istioPlan, charts: istioCharts, ownIngress: true},
	mesh.Linkerd: {plan: (*kubePlatform).linkerdPlan,
		charts:             func(profile, bool) []string { return []string{mesh.ChartLinkerdCRDs, mesh.ChartLinkerdControl} },
		ingressAnnotations: map[string]string{annotLinkerdInject: "ingress"}},
	mesh.Cilium: {plan: (*kubePlatform).ciliumPlan, charts: func(profile, bool) []string { return nil },
		watched: []string{ciliumNamespace, spireNamespace}},
}

// istioCharts are the charts an Istio profile installs.
func istioCharts(pr profile, ingress bool) []string {
	keys := []string{mesh.ChartIstioBase, mesh.ChartIstiod}
	if pr.NodeProxies() {
		keys = append(keys, mesh.ChartIstioCNI, mesh.ChartZtunnel)
	}
	if ingress {
		keys = append(keys, mesh.ChartIstioGateway)
	}
	return keys
}
