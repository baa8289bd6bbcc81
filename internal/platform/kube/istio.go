package kube

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

const (
	istioNamespace = "istio-system"
	// waypointName is the waypoint Gateway meshbench puts in each
	// namespace, and the name of the Deployment Istio makes for it.
	waypointName = "waypoint"

	labelInjection    = "istio-injection"
	labelDataplane    = "istio.io/dataplane-mode"
	labelUseWaypoint  = "istio.io/use-waypoint"
	labelWaypointFor  = "istio.io/waypoint-for"
	annotRedirection  = "ambient.istio.io/redirection"
	labelGatewayName  = "gateway.networking.k8s.io/gateway-name"
	annotProxyConfig  = "proxy.istio.io/config"
	holdUntilProxyCfg = `{"holdApplicationUntilProxyStarts": true}`
)

// istioPlan installs Istio from its charts: base and istiod always, plus
// istio-cni and ztunnel for ambient; the values follow the studies.
func (p *kubePlatform) istioPlan(pl meshPlan) (meshPlan, error) {
	m, ambient := pl.Spec, pl.Profile.Plane == mesh.PlaneNodeProxy
	sel, tol := placementValues(p.place(infra.NodeMesh))
	pilot := map[string]any{"nodeSelector": sel, "tolerations": tol}
	istiod := map[string]any{
		"pilot": pilot,
		"global": map[string]any{
			"proxy":    map[string]any{"resources": requests(m.ProxyCPU, m.ProxyMemory)},
			"waypoint": map[string]any{"resources": requests(m.ProxyCPU, m.ProxyMemory)},
		},
		"meshConfig": map[string]any{"defaultConfig": map[string]any{"concurrency": m.Workers}},
	}
	pl.Namespaces = []string{istioNamespace}
	pl.Releases = []helmRelease{
		{Chart: mesh.ChartIstioBase, Name: "istio-base", Namespace: istioNamespace, Values: map[string]any{}},
	}
	if ambient {
		istiod["profile"] = "ambient"
		pl.Releases = append(pl.Releases,
			helmRelease{Chart: mesh.ChartIstiod, Name: "istiod", Namespace: istioNamespace, Values: istiod},
			helmRelease{Chart: mesh.ChartIstioCNI, Name: "istio-cni", Namespace: istioNamespace, Values: map[string]any{
				"profile": "ambient",
				"cni":     map[string]any{"resources": requests(resources.FormatCPU(mesh.DefaultCNI.CPURequestMilli), resources.FormatMemory(mesh.DefaultCNI.MemRequestBytes))},
			}},
			helmRelease{Chart: mesh.ChartZtunnel, Name: "ztunnel", Namespace: istioNamespace, Values: map[string]any{
				"resources": requests(m.NodeProxyCPU, m.NodeProxyMemory),
				"env":       map[string]any{"ZTUNNEL_WORKER_THREADS": strconv.Itoa(m.Workers)},
			}},
		)
		pl.NSLabels = map[string]string{labelDataplane: "ambient"}
		if pl.Profile.Waypoint {
			pl.NSLabels[labelUseWaypoint] = waypointName
		}
	} else {
		pl.Releases = append(pl.Releases, helmRelease{Chart: mesh.ChartIstiod, Name: "istiod", Namespace: istioNamespace, Values: istiod})
		pl.NSLabels = map[string]string{labelInjection: "enabled"}
	}
	// Mesh-wide STRICT mTLS, so that the plaintext probe must fail.
	pl.Objects = append(pl.Objects, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
		"metadata": meshMeta(istioNamespace, "default"),
		"spec":     map[string]any{"mtls": map[string]any{"mode": "STRICT"}},
	}})
	for _, ns := range p.namespaces {
		if pl.Profile.Waypoint {
			pl.Objects = append(pl.Objects, waypointGateway(ns))
		}
		pl.Objects = append(pl.Objects, authorizationPolicies(ns, p.workload.Graph, pl.Profile, p.opts.Ingress)...)
	}
	return pl, nil
}

// waypointGateway is the namespace's waypoint, serving its Services.
func waypointGateway(ns string) *unstructured.Unstructured {
	md := meshMeta(ns, waypointName)
	md["labels"].(map[string]any)[labelWaypointFor] = "service"
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": md,
		"spec": map[string]any{
			"gatewayClassName": "istio-waypoint",
			"listeners":        []any{map[string]any{"name": "mesh", "port": int64(15008), "protocol": "HBONE"}},
		},
	}}
}

// meshMeta is the metadata of a mesh object meshbench applies itself.
func meshMeta(ns, name string) map[string]any {
	labels := map[string]any{}
	for k, v := range managedLabels(map[string]string{labelComponent: componentMesh}) {
		labels[k] = v
	}
	return map[string]any{"name": name, "namespace": ns, "labels": labels}
}
