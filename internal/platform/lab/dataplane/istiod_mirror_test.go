package dataplane

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func profileNamed(t *testing.T, name string) mesh.Profile {
	t.Helper()
	f, ok := mesh.LookupProfile(name)
	if !ok {
		t.Fatalf("no profile %s", name)
	}
	return f
}

func istioNamed(m mirror, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range m.Istio {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func TestMirrorSidecarPolicy(t *testing.T) {
	inv := fixture()
	m := buildMirror(newView(inv), profileNamed(t, "sidecar-l7-policy"))
	if len(m.Pods) != 5 || len(m.Services) != 4 || len(m.Nodes) != 3 {
		t.Fatalf("mirror: %d pods, %d services, %d nodes", len(m.Pods), len(m.Services), len(m.Nodes))
	}
	p := m.Pods[0]
	if p.Name != "tier-1-app-a-0" || p.Spec.NodeName != "app" || p.Status.PodIP != "10.244.1.10" || p.Spec.ServiceAccountName != "tier-1-app-a" {
		t.Errorf("pod: %s on %s at %s as %s", p.Name, p.Spec.NodeName, p.Status.PodIP, p.Spec.ServiceAccountName)
	}
	if p.Labels["security.istio.io/tlsMode"] != "istio" || p.Labels["svc.meshbench.io/tier-1-app-a"] != "true" {
		t.Errorf("pod labels: %v", p.Labels)
	}
	s := m.Services[0]
	if s.Spec.ClusterIP != "10.96.0.10" || s.Spec.Ports[0].Port != 8080 || s.Spec.Ports[0].Name != "http" ||
		!reflect.DeepEqual(s.Spec.Selector, map[string]string{"svc.meshbench.io/tier-1-app-a": "true"}) {
		t.Errorf("service: %+v", s.Spec)
	}
	pa := istioNamed(m, "PeerAuthentication", "istio-system", "default")
	if mode, _, _ := unstructured.NestedString(pa.Object, "spec", "mtls", "mode"); mode != "STRICT" {
		t.Errorf("peer authentication: %v", pa)
	}
	ap := istioNamed(m, "AuthorizationPolicy", "ns-1", "tier-3-app-a")
	rules, _, _ := unstructured.NestedSlice(ap.Object, "spec", "rules")
	want := []any{map[string]any{
		"from": []any{map[string]any{"source": map[string]any{"principals": []any{"cluster.local/ns/ns-1/sa/tier-2-app-a", "cluster.local/ns/ns-1/sa/tier-2-app-b"}}}},
		"to":   []any{map[string]any{"operation": map[string]any{"paths": []any{"/*"}, "notPaths": []any{"/admin/*"}}}},
	}}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("tier-3 policy rules:\n%v\nwant\n%v", rules, want)
	}
	if sel, _, _ := unstructured.NestedStringMap(ap.Object, "spec", "selector", "matchLabels"); sel["svc.meshbench.io/tier-3-app-a"] != "true" {
		t.Errorf("tier-3 policy selector: %v", sel)
	}
	entry := istioNamed(m, "AuthorizationPolicy", "ns-1", "tier-1-app-a")
	from, _, _ := unstructured.NestedSlice(entry.Object, "spec", "rules")
	if got := from[0].(map[string]any)["from"].([]any)[0].(map[string]any)["source"].(map[string]any)["principals"]; !reflect.DeepEqual(got,
		[]any{"cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account", "cluster.local/ns/ns-1/sa/loadgen"}) {
		t.Errorf("entry admits %v", got)
	}
}

func TestMirrorAmbientWaypoint(t *testing.T) {
	m := buildMirror(newView(fixture()), profileNamed(t, "waypoint-l7-policy"))
	var ns map[string]string
	for _, n := range m.Namespaces {
		if n.Name == "ns-1" {
			ns = n.Labels
		}
	}
	if ns["istio.io/dataplane-mode"] != "ambient" || ns["istio.io/use-waypoint"] != "waypoint" {
		t.Errorf("namespace labels: %v", ns)
	}
	if _, ok := m.Pods[0].Labels["security.istio.io/tlsMode"]; ok {
		t.Error("ambient pod carries the sidecar's tlsMode label")
	}
	if g := istioNamed(m, "Gateway", "ns-1", "waypoint"); g == nil || g.GetLabels()["istio.io/waypoint-for"] != "service" {
		t.Errorf("waypoint gateway: %v", g)
	}
	ap := istioNamed(m, "AuthorizationPolicy", "ns-1", "tier-2-app-a")
	if refs, _, _ := unstructured.NestedSlice(ap.Object, "spec", "targetRefs"); len(refs) != 1 {
		t.Errorf("waypoint policy targets %v, want the Service", refs)
	}
	// istiod tunnels to a pod only if Istio's CNI would have redirected it.
	if m.Pods[0].Annotations["ambient.istio.io/redirection"] != "enabled" {
		t.Errorf("ambient pod annotations: %v", m.Pods[0].Annotations)
	}
	// The waypoint's Service and account, and the Gateway's status naming
	// the Service, without which istiod binds nothing to the waypoint.
	var wsvc *corev1.Service
	for _, s := range m.Services {
		if s.Namespace == "ns-1" && s.Name == "waypoint" {
			wsvc = s
		}
	}
	if wsvc == nil || wsvc.Spec.ClusterIP != "" || !reflect.DeepEqual(wsvc.Spec.Selector, map[string]string{"gateway.networking.k8s.io/gateway-name": "waypoint"}) ||
		wsvc.Spec.Ports[0].Port != 15008 {
		t.Errorf("waypoint service: %+v", wsvc)
	}
	sa := false
	for _, a := range m.ServiceAccounts {
		sa = sa || a.Namespace == "ns-1" && a.Name == "waypoint"
	}
	if !sa {
		t.Error("no waypoint service account")
	}
	g := istioNamed(m, "Gateway", "ns-1", "waypoint")
	addrs, _, _ := unstructured.NestedSlice(g.Object, "status", "addresses")
	if !reflect.DeepEqual(addrs, []any{map[string]any{"type": "Hostname", "value": "waypoint.ns-1.svc.cluster.local"}}) {
		t.Errorf("waypoint gateway status addresses: %v", addrs)
	}
	tel := istioNamed(m, "Telemetry", "istio-system", "meshbench-probe")
	if ps, _, _ := unstructured.NestedSlice(tel.Object, "spec", "accessLogging"); ps[0].(map[string]any)["providers"].([]any)[0].(map[string]any)["name"] != waypointProbeLogProvider {
		t.Errorf("probe telemetry under a waypoint: %v", ps)
	}
}

func TestMirrorWaypointPod(t *testing.T) {
	cs := fake.NewClientset()
	pl := &istiodPlane{kube: &localkube.Cluster{Client: cs}}
	ctx := context.Background()
	wp := &Pod{Namespace: "ns-1", Name: "waypoint-0", Node: "app", IP: netip.MustParseAddr("10.244.1.20"), ServiceAccount: "waypoint"}
	if err := pl.mirrorWaypoint(ctx, wp); err != nil {
		t.Fatal(err)
	}
	p, err := cs.CoreV1().Pods("ns-1").Get(ctx, "waypoint-0", metav1.GetOptions{})
	if err != nil || p.Status.PodIP != "10.244.1.20" || !podReady(p) || p.Spec.ServiceAccountName != "waypoint" {
		t.Fatalf("waypoint pod: %v %v", p, err)
	}
	// The waypoint Service selects it; it stays out of ambient capture.
	if p.Labels["gateway.networking.k8s.io/gateway-name"] != "waypoint" || p.Labels["istio.io/dataplane-mode"] != "none" {
		t.Errorf("waypoint pod labels: %v", p.Labels)
	}
	if _, ok := p.Annotations["ambient.istio.io/redirection"]; ok {
		t.Error("the waypoint pod is marked as redirected to ztunnel")
	}
}

func TestMirrorApply(t *testing.T) {
	m := buildMirror(newView(fixture()), profileNamed(t, "sidecar"))
	cs := fake.NewClientset()
	dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme())
	ctx := context.Background()
	if err := m.apply(ctx, cs, dyn); err != nil {
		t.Fatal(err)
	}
	p, err := cs.CoreV1().Pods("ns-1").Get(ctx, "loadgen-0", metav1.GetOptions{})
	if err != nil || p.Status.PodIP != "10.244.2.10" || !podReady(p) {
		t.Fatalf("loadgen pod: %v %v", p, err)
	}
	if _, err := dyn.Resource(istioResources["PeerAuthentication"]).Namespace("istio-system").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	// Applying again (a resumed install) is not an error.
	if err := m.apply(ctx, cs, dyn); err != nil {
		t.Error(err)
	}
}

func TestControlPlaneNode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		roles []string
		want  string
	}{
		{"mesh first", []string{"app", "load", "ingress", "mesh"}, "n3"},
		{"then load", []string{"app", "ingress", "load"}, "n2"},
		{"then ingress", []string{"app", "ingress"}, "n1"},
		{"app alone", []string{"app", "app"}, "n0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv Inventory
			for i, r := range tc.roles {
				inv.Nodes = append(inv.Nodes, Node{Name: fmt.Sprintf("n%d", i), Role: r})
			}
			if got := controlPlaneNode(newView(inv)).Name; got != tc.want {
				t.Errorf("istiod on %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMirrorApplyGatewayStatus(t *testing.T) {
	m := buildMirror(newView(fixture()), profileNamed(t, "ambient-waypoint"))
	cs := fake.NewClientset()
	gvr := istioResources["Gateway"]
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "GatewayList"})
	ctx := context.Background()
	if err := m.apply(ctx, cs, dyn); err != nil {
		t.Fatal(err)
	}
	g, err := dyn.Resource(gvr).Namespace("ns-1").Get(ctx, "waypoint", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if addrs, _, _ := unstructured.NestedSlice(g.Object, "status", "addresses"); len(addrs) != 1 {
		t.Errorf("gateway status after apply: %v", g.Object["status"])
	}
	// A real API server ignores status on create: it must be written
	// through the status subresource.
	statusWrites := 0
	for _, a := range dyn.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" && a.GetResource() == gvr {
			statusWrites++
		}
	}
	if statusWrites != 1 {
		t.Errorf("%d status updates of the waypoint Gateway, want 1", statusWrites)
	}
	if _, err := cs.CoreV1().Services("ns-1").Get(ctx, "waypoint", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}
