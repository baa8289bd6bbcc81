package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	for _, ns := range p.namespaces {
		// STRICT mTLS in each of the workload's namespaces, so that the
		// plaintext probe must fail. Namespace-wide, not mesh-wide: a
		// namespace's policy overrides the mesh's, and meshbench's own
		// namespaces are the only ones it may set policy in, as an
		// existing mesh's policy is its owner's.
		pl.Objects = append(pl.Objects, strictMTLS(ns))
		if pl.Profile.Waypoint {
			pl.Objects = append(pl.Objects, waypointGateway(ns))
		}
		pl.Objects = append(pl.Objects, authorizationPolicies(ns, p.workload.Graph, pl.Profile, p.opts.Ingress)...)
	}
	return pl, nil
}

// peerAuthName is meshbench's PeerAuthentication in each workload
// namespace.
const peerAuthName = "meshbench-strict"

var peerAuthGVK = schema.GroupVersionKind{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"}

// strictMTLS is a namespace-wide PeerAuthentication requiring mTLS.
func strictMTLS(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
		"metadata": meshMeta(ns, peerAuthName),
		"spec":     map[string]any{"mtls": map[string]any{"mode": "STRICT"}},
	}}
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

// refuseWeakerPeerAuth refuses an existing Istio whose root namespace
// holds a PeerAuthentication that selects the workload's pods with mTLS
// other than STRICT: Istio applies a workload's policy over its
// namespace's, so meshbench's STRICT would not hold for those pods and
// plaintext would pass. meshbench never changes the mesh's own policy.
// A mesh-wide policy (no selector) is overridden by meshbench's in its
// namespaces, whatever its mode.
func (p *kubePlatform) refuseWeakerPeerAuth(ctx context.Context) error {
	ri, err := p.c.resourceFor(peerAuthGVK, istioNamespace)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("read the mesh's PeerAuthentications in %s: %w", istioNamespace, err)
	}
	var pods []map[string]string // the workload's pod labels
	var names []string
	for _, ns := range p.namespaces {
		deps, err := p.c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
		if err != nil {
			return fmt.Errorf("list deployments in %s: %w", ns, err)
		}
		for _, d := range deps.Items {
			pods = append(pods, d.Spec.Template.Labels)
			names = append(names, ns+"/"+d.Name)
		}
	}
	for _, pa := range list.Items {
		sel, _, _ := unstructured.NestedStringMap(pa.Object, "spec", "selector", "matchLabels")
		if len(sel) == 0 {
			continue
		}
		weak := weakModes(pa.Object)
		if len(weak) == 0 {
			continue
		}
		var hit []string
		for i, labels := range pods {
			if selects(sel, labels) {
				hit = append(hit, names[i])
			}
		}
		if len(hit) > 0 {
			return fmt.Errorf("the mesh's PeerAuthentication %s/%s selects meshbench's pods (%s) with mTLS %s, which overrides meshbench's STRICT in its namespaces, so plaintext would not be refused; "+
				"meshbench does not change the mesh's policies: narrow its selector so that meshbench's pods (labels %s) fall outside it, or run on another cluster",
				istioNamespace, pa.GetName(), strings.Join(hit, ", "), strings.Join(weak, ", "), labelManagedBy+"="+managedBy)
		}
	}
	return nil
}

// weakModes are the mTLS modes other than STRICT a PeerAuthentication
// sets, for the workload or any port.
func weakModes(obj map[string]any) []string {
	var out []string
	add := func(mode string) {
		if mode != "" && mode != "STRICT" && mode != "UNSET" && !slices.Contains(out, mode) {
			out = append(out, mode)
		}
	}
	mode, _, _ := unstructured.NestedString(obj, "spec", "mtls", "mode")
	add(mode)
	ports, _, _ := unstructured.NestedMap(obj, "spec", "portLevelMtls")
	for _, port := range ports {
		if m, ok := port.(map[string]any); ok {
			mode, _ := m["mode"].(string)
			add(mode)
		}
	}
	slices.Sort(out)
	return out
}

// selects says whether a selector's labels are all among a pod's.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
