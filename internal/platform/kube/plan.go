package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

// meshPlan is everything InstallMesh does for one profile, in order:
// system namespaces, charts, workload namespace labels and annotations,
// then the mesh objects meshbench applies itself (mTLS mode, waypoints,
// policies).
type meshPlan struct {
	Profile    profile
	Name       string
	Spec       mesh.MeshSpec
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

// withDefaults fills a mesh spec's zero values with the registry's
// Istio defaults. Only requests are set: charts keep their own limits.
func withDefaults(m mesh.MeshSpec) mesh.MeshSpec {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if m.Workers == 0 {
		m.Workers = mesh.DefaultWorkers
	}
	if m.WaypointReplicas == 0 {
		m.WaypointReplicas = mesh.DefaultWaypointReplicas
	}
	def(&m.ProxyCPU, resources.FormatCPU(mesh.DefaultProxy.CPURequestMilli))
	def(&m.ProxyMemory, resources.FormatMemory(mesh.DefaultProxy.MemRequestBytes))
	def(&m.NodeProxyCPU, resources.FormatCPU(mesh.DefaultNodeProxy.CPURequestMilli))
	def(&m.NodeProxyMemory, resources.FormatMemory(mesh.DefaultNodeProxy.MemRequestBytes))
	return m
}

// plan builds the install plan of a mesh spec for the deployed workload.
func (p *kubePlatform) plan(m mesh.MeshSpec) (meshPlan, error) {
	pr, err := lookupProfile(m.Profile)
	if err != nil {
		return meshPlan{}, err
	}
	if err := p.existingIngress(m, pr); err != nil {
		return meshPlan{}, err
	}
	pl := meshPlan{Profile: pr, Name: m.Profile, Spec: withDefaults(m)}
	if pr.Mesh != "" {
		inst, ok := installers[pr.Mesh]
		if !ok {
			return meshPlan{}, fmt.Errorf("mesh %q has no installer", pr.Mesh)
		}
		if pl, err = inst.plan(p, pl); err != nil {
			return pl, err
		}
		if m.UseExisting {
			// The cluster's own install stands in for the charts, and
			// meshbench neither installs nor removes it.
			pl.Releases = nil
		}
	}
	if err != nil || !p.opts.Ingress {
		return pl, err
	}
	return p.withIngress(pl)
}

// existingIngress refuses an existing mesh's profile in a study with an
// ingress when the mesh's family brings its own gateway (Istio's): it
// would be the cluster's gateway, taking meshbench's routes for every
// host, which meshbench never changes. Linkerd's ingress is meshbench's
// plain gateway in a namespace of its own.
func (p *kubePlatform) existingIngress(m mesh.MeshSpec, pr profile) error {
	if !m.UseExisting || !p.opts.Ingress || pr.Family().IngressChart == "" {
		return nil
	}
	return fmt.Errorf("profile %s with use_existing in a study with ingress cells: the ingress gateway would be the cluster's own (%s/%s), "+
		"whose routes meshbench does not change; run the ingress cells on a cluster where meshbench installs %s, or drop them", m.Profile, istioNamespace, ingressGatewayName, pr.Mesh)
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
