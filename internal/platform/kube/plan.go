package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/platform"
)

// meshPlan is everything InstallMesh does for one profile, in order:
// system namespaces, charts, workload namespace labels and annotations,
// then the mesh objects meshbench applies itself (mTLS mode, waypoints,
// policies).
type meshPlan struct {
	Profile    profile
	Name       string
	Spec       platform.MeshSpec
	Namespaces []string // system namespaces the charts go in
	// SystemLabels are labels a system namespace needs, if meshbench
	// creates it, by namespace.
	SystemLabels  map[string]map[string]string
	Releases      []helmRelease
	NSLabels      map[string]string
	NSAnnotations map[string]string
	Objects       []*unstructured.Unstructured
	// Ingress says the plan has an ingress gateway (Options.Ingress).
	Ingress bool
}

// Defaults the studies used (Solo.io's 50-tenant study, seeds/002).
const (
	defaultWorkers         = 2
	defaultProxyCPU        = "100m"
	defaultProxyMemory     = "128Mi"
	defaultNodeProxyCPU    = "200m"
	defaultNodeProxyMemory = "512Mi"
	defaultCNICPU          = "100m"
	defaultCNIMemory       = "100Mi"
)

// withDefaults fills a mesh spec's zero values.
func withDefaults(m platform.MeshSpec) platform.MeshSpec {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if m.Workers == 0 {
		m.Workers = defaultWorkers
	}
	if m.WaypointReplicas == 0 {
		m.WaypointReplicas = 1
	}
	def(&m.ProxyCPU, defaultProxyCPU)
	def(&m.ProxyMemory, defaultProxyMemory)
	def(&m.NodeProxyCPU, defaultNodeProxyCPU)
	def(&m.NodeProxyMemory, defaultNodeProxyMemory)
	return m
}

// plan builds the install plan of a mesh spec for the deployed workload.
func (p *kubePlatform) plan(m platform.MeshSpec) (meshPlan, error) {
	pr, err := lookupProfile(m.Profile)
	if err != nil {
		return meshPlan{}, err
	}
	pl := meshPlan{Profile: pr, Name: m.Profile, Spec: withDefaults(m)}
	switch pr.Mesh {
	case "":
	case "istio":
		pl, err = p.istioPlan(pl)
	case "linkerd":
		pl, err = p.linkerdPlan(pl)
	case "cilium":
		pl, err = p.ciliumPlan(pl)
	default:
		return meshPlan{}, fmt.Errorf("mesh %q has no installer", pr.Mesh)
	}
	if err != nil || !p.opts.Ingress {
		return pl, err
	}
	return p.withIngress(pl)
}

// requests is a Kubernetes requests block for chart values.
func requests(cpu, memory string) map[string]any {
	return map[string]any{"requests": map[string]any{"cpu": cpu, "memory": memory}}
}

// placementValues returns a placement as chart values.
func placementValues(pl placement) (nodeSelector map[string]any, tolerations []any) {
	nodeSelector = map[string]any{}
	for k, v := range pl.NodeSelector {
		nodeSelector[k] = v
	}
	tolerations = []any{}
	for _, t := range pl.Tolerations {
		tolerations = append(tolerations, map[string]any{
			"key": t.Key, "operator": string(t.Operator), "value": t.Value, "effect": string(t.Effect),
		})
	}
	return nodeSelector, tolerations
}
