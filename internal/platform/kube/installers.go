package kube

import "github.com/meshbench/meshbench/internal/mesh"

// installer is how Kubernetes installs one mesh family: a new mesh adds
// its registry entry (its charts among its facts), one installer here and
// the file that plans it.
type installer struct {
	// plan adds the family's charts, namespace labels and objects to a
	// plan.
	plan func(p *kubePlatform, pl meshPlan) (meshPlan, error)
	// ingressAnnotations go on the plain ingress gateway's pods, which
	// meshbench applies where the family's charts bring no gateway.
	ingressAnnotations map[string]string
	// watched are namespaces outside the plan's whose pods are the mesh's
	// (those of a CNI the cluster brought), measured with it.
	watched []string
}

// installers are the families Kubernetes installs, by name.
var installers = map[string]installer{
	mesh.Istio:   {plan: (*kubePlatform).istioPlan},
	mesh.Linkerd: {plan: (*kubePlatform).linkerdPlan, ingressAnnotations: map[string]string{annotLinkerdInject: "ingress"}},
	mesh.Cilium:  {plan: (*kubePlatform).ciliumPlan, watched: []string{ciliumNamespace, spireNamespace}},
}
