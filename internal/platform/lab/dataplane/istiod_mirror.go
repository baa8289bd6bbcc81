package dataplane

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/topology"
)

// The lab as istiod sees it: its nodes, pods and Services as Kubernetes
// objects in the test API server (pods on kwok nodes, with the lab's
// addresses), and the profile's Istio resources. Labels are what
// Istio's injector and the workload's Deployment would have set.

// serviceLabel selects a Service's pods: a pod carries one per Service it
// backs, because the lab's pods are placed per Service and some back more
// than one.
func serviceLabel(s *Service) string { return "svc.meshbench.io/" + s.Name }

// mirror is the objects that describe the lab to istiod.
type mirror struct {
	Namespaces      []*corev1.Namespace
	ServiceAccounts []*corev1.ServiceAccount
	Nodes           []*corev1.Node
	Pods            []*corev1.Pod // their status (address, Ready) is set after creation
	Services        []*corev1.Service
	Istio           []*unstructured.Unstructured // applied after the rest
}

// buildMirror describes the view's meshed pods and Services for a
// profile. Sidecar pods carry the injector's tlsMode label (istiod sends
// them mTLS); ambient namespaces carry the dataplane-mode label and, with
// a waypoint, the use-waypoint label naming it.
func buildMirror(v *view, f mesh.Profile) mirror {
	var m mirror
	namespaces := map[string]bool{systemNamespace: true}
	accounts := map[string]bool{}
	for _, p := range v.meshedPods("") {
		namespaces[p.Namespace] = true
		if key := p.Namespace + "/" + p.ServiceAccount; !accounts[key] {
			accounts[key] = true
			m.ServiceAccounts = append(m.ServiceAccounts, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.ServiceAccount}})
		}
		m.Pods = append(m.Pods, mirrorPod(v, p, f))
	}
	for _, n := range sortedKeys(namespaces) {
		labels := map[string]string{}
		if n != systemNamespace && f.NodeProxies() {
			labels["istio.io/dataplane-mode"] = "ambient"
			if f.Waypoint {
				labels["istio.io/use-waypoint"] = waypointName
			}
		}
		m.Namespaces = append(m.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}})
	}
	for _, n := range v.Nodes {
		m.Nodes = append(m.Nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        n.Name,
				Labels:      map[string]string{"kubernetes.io/hostname": n.Name, "type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
		})
	}
	for i := range v.Services {
		s := &v.Services[i]
		if !namespaces[s.Namespace] {
			continue
		}
		m.Services = append(m.Services, mirrorService(v, s))
	}
	m.Istio = append(m.Istio, strictPeerAuthentication(), probeTelemetry(f))
	if f.L4Policy || f.L7Policy {
		for i := range v.Services {
			s := &v.Services[i]
			if namespaces[s.Namespace] {
				m.Istio = append(m.Istio, authorizationPolicy(v, s, f))
			}
		}
	}
	if f.Waypoint {
		for _, n := range sortedKeys(namespaces) {
			if n != systemNamespace {
				m.ServiceAccounts = append(m.ServiceAccounts, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: waypointAccount}})
				m.Services = append(m.Services, waypointService(n))
				m.Istio = append(m.Istio, waypointGateway(n))
			}
		}
	}
	return m
}

// appName is a pod's app label: the first Service it backs, else its own
// name.
func appName(v *view, p *Pod) string {
	if svcs := v.servicesOf(p); len(svcs) > 0 {
		return svcs[0].Name
	}
	return p.Name
}

// podLabels are a pod's labels: its Services' selectors, its app and
// canonical names, and with a sidecar the injector's tlsMode.
func podLabels(v *view, p *Pod, sidecar bool) map[string]string {
	labels := map[string]string{}
	for _, s := range v.servicesOf(p) {
		labels[serviceLabel(s)] = "true"
	}
	app := appName(v, p)
	labels["app"] = app
	labels["service.istio.io/canonical-name"] = app
	labels["service.istio.io/canonical-revision"] = "latest"
	if sidecar {
		labels["security.istio.io/tlsMode"] = "istio"
	}
	return labels
}

// mirrorPod is a meshed pod; in ambient, with the annotation Istio's CNI
// sets once it redirects the pod's traffic to ztunnel, from which istiod
// knows the pod takes HBONE (a waypoint tunnels to it).
func mirrorPod(v *view, p *Pod, f mesh.Profile) *corev1.Pod {
	labels := podLabels(v, p, f.Sidecars())
	var ports []corev1.ContainerPort
	for _, port := range v.podPorts(p) {
		ports = append(ports, corev1.ContainerPort{ContainerPort: int32(port), Protocol: corev1.ProtocolTCP})
	}
	var annotations map[string]string
	if f.NodeProxies() {
		annotations = map[string]string{"ambient.istio.io/redirection": "enabled"}
	}
	return kwokPod(p, labels, annotations, ports)
}

// kwokPod is a lab pod on its kwok node, at its lab address, Ready.
func kwokPod(p *Pod, labels, annotations map[string]string, ports []corev1.ContainerPort) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			NodeName: p.Node, ServiceAccountName: p.ServiceAccount,
			Containers:  []corev1.Container{{Name: "app", Image: "meshbench/lab", Ports: ports}},
			Tolerations: []corev1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: p.IP.String(), PodIPs: []corev1.PodIP{{IP: p.IP.String()}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
		},
	}
}

// mirrorService is a Service at the lab's VIP selecting its pods. Its
// port is named for its callers' protocol so that istiod gives it the
// lab's HTTP handling; a port several protocols use is left to istiod's
// protocol detection.
func mirrorService(v *view, s *Service) *corev1.Service {
	target := s.Port
	if len(s.Endpoints) > 0 {
		target = int(s.Endpoints[0].Port())
	}
	port := corev1.ServicePort{Port: int32(s.Port), TargetPort: intstr.FromInt(target), Protocol: corev1.ProtocolTCP}
	switch protos := s.Protocols; {
	case len(protos) == 0 || len(protos) == 1 && protos[0] == topology.ProtocolHTTP:
		port.Name = "http"
	case len(protos) == 1 && protos[0] == topology.ProtocolGRPC:
		port.Name = "grpc"
	case len(protos) == 1 && protos[0] == topology.ProtocolH2C:
		port.Name = "http2"
	default:
		port.Name = "auto" // no protocol prefix: istiod detects it
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
		Spec: corev1.ServiceSpec{
			ClusterIP: s.VIP.String(), ClusterIPs: []string{s.VIP.String()},
			Selector: map[string]string{serviceLabel(s): "true"},
			Ports:    []corev1.ServicePort{port},
		},
	}
}

func istioObject(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     spec,
	}}
}

// strictPeerAuthentication is mesh-wide STRICT mTLS (in the root
// namespace), which the lab's own configuration enforces too.
func strictPeerAuthentication() *unstructured.Unstructured {
	return istioObject("security.istio.io/v1", "PeerAuthentication", systemNamespace, "default",
		map[string]any{"mtls": map[string]any{"mode": "STRICT"}})
}

// The probe access logs in istiod's mesh config: a sidecar's, and a
// waypoint's, whose peer is the HBONE client's identity, kept in filter
// state by its CONNECT termination (the inbound HTTP runs on an internal
// connection, without a peer certificate).
const (
	probeLogProvider         = "meshbench-probe"
	waypointProbeLogProvider = "meshbench-probe-waypoint"
	waypointProbeLogFormat   = "probe=%REQ(" + probeHeader + ")% peer=%FILTER_STATE(" + peerPrincipalKey + ":PLAIN)% code=%RESPONSE_CODE%"
)

// probeTelemetry turns the probe log on, mesh-wide, for inbound requests
// that carry the probe header: the waypoints' under a waypoint profile,
// where they are the proxies istiod configures, else the sidecars'.
func probeTelemetry(f mesh.Profile) *unstructured.Unstructured {
	provider := probeLogProvider
	if f.Waypoint {
		provider = waypointProbeLogProvider
	}
	return istioObject("telemetry.istio.io/v1", "Telemetry", systemNamespace, "meshbench-probe", map[string]any{
		"accessLogging": []any{map[string]any{
			"providers": []any{map[string]any{"name": provider}},
			"match":     map[string]any{"mode": "SERVER"},
			"filter":    map[string]any{"expression": "'" + probeHeader + "' in request.headers"},
		}},
	})
}

// authorizationPolicy is the ALLOW policy allowedPrincipals describes: the
// graph's callers of a Service; under L7 policy only on paths outside
// /admin/. Under a waypoint it targets the Service (the waypoint enforces
// it); otherwise it selects the Service's pods.
func authorizationPolicy(v *view, s *Service, f mesh.Profile) *unstructured.Unstructured {
	var principals []any
	for _, id := range v.allowedPrincipals(s) {
		principals = append(principals, strings.TrimPrefix(id, "spiffe://"))
	}
	rule := map[string]any{}
	if len(principals) > 0 {
		rule["from"] = []any{map[string]any{"source": map[string]any{"principals": principals}}}
	}
	if f.L7Policy {
		rule["to"] = []any{map[string]any{"operation": map[string]any{"paths": []any{"/*"}, "notPaths": []any{deniedPathPrefix + "*"}}}}
	}
	spec := map[string]any{"action": "ALLOW", "rules": []any{rule}}
	if len(principals) == 0 {
		spec["rules"] = []any{} // an ALLOW policy matching nobody denies everything
	}
	if f.Waypoint && f.L7Policy {
		spec["targetRefs"] = []any{map[string]any{"kind": "Service", "group": "", "name": s.Name}}
	} else {
		spec["selector"] = map[string]any{"matchLabels": map[string]any{serviceLabel(s): "true"}}
	}
	return istioObject("security.istio.io/v1", "AuthorizationPolicy", s.Namespace, s.Name, spec)
}

// Labels of a waypoint's pods and Service, as Istio's Gateway deployment
// controller sets them: istiod finds a waypoint's pods by its name and
// the Services it serves through the waypoint Service's host name.
const (
	gatewayNameLabel = "gateway.networking.k8s.io/gateway-name"
	waypointClass    = "istio-waypoint"
)

// waypointGateway is a namespace's waypoint, as `istioctl waypoint apply`
// writes it, with the status Istio's Gateway controller reports once the
// waypoint runs: its Service's host name, without which istiod binds no
// Service to it.
func waypointGateway(ns string) *unstructured.Unstructured {
	g := istioObject("gateway.networking.k8s.io/v1", "Gateway", ns, waypointName, map[string]any{
		"gatewayClassName": waypointClass,
		"listeners":        []any{map[string]any{"name": "mesh", "port": int64(portHBONE), "protocol": "HBONE"}},
	})
	g.SetLabels(map[string]string{"istio.io/waypoint-for": "service"})
	g.Object["status"] = map[string]any{"addresses": []any{map[string]any{
		"type": "Hostname", "value": Service{Namespace: ns, Name: waypointName}.Host(),
	}}}
	return g
}

// waypointService is the Service in front of a namespace's waypoint pods,
// as the Gateway deployment controller creates it (its address allocated
// by the API server: the lab's node proxies reach the waypoint pods
// directly).
func waypointService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: waypointName, Labels: map[string]string{
			gatewayNameLabel: waypointName, "gateway.istio.io/managed": "istio.io-mesh-controller",
		}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{gatewayNameLabel: waypointName},
			Ports:    []corev1.ServicePort{{Name: "mesh", Port: portHBONE, TargetPort: intstr.FromInt(portHBONE), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// waypointPodLabels are a waypoint pod's labels: its Gateway's, and out of
// ambient capture (a waypoint terminates its own HBONE).
func waypointPodLabels() map[string]string {
	return map[string]string{
		gatewayNameLabel: waypointName, "gateway.networking.k8s.io/gateway-class-name": waypointClass,
		"istio.io/dataplane-mode":         "none",
		"service.istio.io/canonical-name": waypointName, "service.istio.io/canonical-revision": "latest",
	}
}

// mirrorWaypoint adds a waypoint pod the lab started to the mirror, so
// that istiod knows the proxy at its address as its Gateway's waypoint
// before the proxy connects.
func (pl *istiodPlane) mirrorWaypoint(ctx context.Context, p *Pod) error {
	ports := []corev1.ContainerPort{{Name: "mesh", ContainerPort: portHBONE, Protocol: corev1.ProtocolTCP}}
	return createPod(ctx, pl.kube.Client, kwokPod(p, waypointPodLabels(), nil, ports))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Istio's and the Gateway API's resources the mirror applies.
var istioResources = map[string]schema.GroupVersionResource{
	"PeerAuthentication":  {Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"},
	"AuthorizationPolicy": {Group: "security.istio.io", Version: "v1", Resource: "authorizationpolicies"},
	"Telemetry":           {Group: "telemetry.istio.io", Version: "v1", Resource: "telemetries"},
	"Gateway":             {Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"},
}

// apply creates the mirror's objects in the API server, then gives each
// pod the lab's address and Ready, as a kubelet would report them (kwok
// keeps an address it finds set).
func (m mirror) apply(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface) error {
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("mirror the lab to istiod: create %s: %w", what, err)
		}
		return nil
	}
	opts := metav1.CreateOptions{}
	for _, o := range m.Namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, o, opts)
		if err := create("namespace "+o.Name, err); err != nil {
			return err
		}
	}
	for _, o := range m.Nodes {
		_, err := cs.CoreV1().Nodes().Create(ctx, o, opts)
		if err := create("node "+o.Name, err); err != nil {
			return err
		}
	}
	for _, o := range m.ServiceAccounts {
		_, err := cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
		if err := create("service account "+o.Namespace+"/"+o.Name, err); err != nil {
			return err
		}
	}
	for _, o := range m.Services {
		_, err := cs.CoreV1().Services(o.Namespace).Create(ctx, o, opts)
		if err := create("service "+o.Namespace+"/"+o.Name, err); err != nil {
			return err
		}
	}
	for _, o := range m.Pods {
		if err := createPod(ctx, cs, o); err != nil {
			return err
		}
	}
	for _, o := range m.Istio {
		gvr, ok := istioResources[o.GetKind()]
		if !ok {
			return fmt.Errorf("mirror the lab to istiod: no resource for kind %s", o.GetKind())
		}
		what := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		got, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Create(ctx, o, opts)
		if err := create(what, err); err != nil {
			return err
		}
		if status, ok := o.Object["status"]; ok && got != nil {
			// The status subresource ignores status on create.
			got.Object["status"] = status
			if _, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("mirror the lab to istiod: status of %s: %w", what, err)
			}
		}
	}
	return nil
}

// createPod creates a pod and sets its status to the mirror's, retrying
// while kwok writes its own status concurrently.
func createPod(ctx context.Context, cs kubernetes.Interface, want *corev1.Pod) error {
	pods := cs.CoreV1().Pods(want.Namespace)
	if _, err := pods.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("mirror the lab to istiod: create pod %s/%s: %w", want.Namespace, want.Name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := pods.Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if got.Status.PodIP == want.Status.PodIP && podReady(got) {
			return true, nil
		}
		got.Status.Phase, got.Status.PodIP, got.Status.PodIPs = want.Status.Phase, want.Status.PodIP, want.Status.PodIPs
		now := metav1.Now()
		got.Status.Conditions = nil
		for _, c := range want.Status.Conditions {
			c.LastTransitionTime = now
			got.Status.Conditions = append(got.Status.Conditions, c)
		}
		if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return false, err
		}
		return false, nil // read back: kwok may have written in between
	})
	if err != nil {
		return fmt.Errorf("mirror the lab to istiod: pod %s/%s did not keep address %s: %w", want.Namespace, want.Name, want.Status.PodIP, err)
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
