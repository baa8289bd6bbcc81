package kube

import (
	"fmt"
	"maps"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/versions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The ingress path: load from outside the mesh enters through a gateway,
// as LiveWyer's VM called the ingress gateway. The Istio profiles get
// Istio's own gateway (its gateway chart, injected by istiod); baseline,
// Linkerd and Cilium get a plain Envoy gateway. Both route the path
// prefix /<namespace>/ (stripped) to that namespace's entry Service, as
// the lab's gateway does, so that one URL shape serves both platforms.
const (
	// ingressGatewayName is the Istio gateway's release, Deployment and
	// Service; the chart labels its pods istio=ingressgateway.
	ingressGatewayName = "istio-ingressgateway"
	// ingressAccount is the Istio gateway's identity, the same as the
	// lab's, so that a policy names the gateway the same way on both.
	ingressAccount = "istio-ingressgateway-service-account"
	// ingressPort is the gateway Service's HTTP port (the chart's "http2").
	ingressPort = 80

	// plainIngressNamespace holds the plain gateway; meshbench makes it.
	plainIngressNamespace = "meshbench-ingress"
	plainIngressName      = "meshbench-ingress"
	plainIngressListen    = 8080

	// outsideNamespace is where the outside generator runs: never meshed
	// (no injection label, no enrollment), on the load node, as a client
	// outside the cluster's mesh calls the gateway.
	outsideNamespace = "meshbench-outside"

	// labelIngressUseWaypoint on a namespace sends the gateway's traffic
	// through the namespace's waypoint.
	labelIngressUseWaypoint = "istio.io/ingress-use-waypoint"

	// defaultGatewayImage is the plain gateway's Envoy.
	defaultGatewayImage = versions.GatewayImage
)

// ingressPlace is where the gateway runs: the ingress node, else the mesh
// node, else the load node, never an app node (as on the lab).
func (p *kubePlatform) ingressPlace() placement {
	for _, role := range []infra.NodeRole{infra.NodeIngress, infra.NodeMesh, infra.NodeLoad} {
		if pl, ok := p.places[role]; ok {
			return pl
		}
	}
	return placement{}
}

// ingressHost is the gateway Service's DNS name, as a pod calls it.
func ingressHost(pr profile) string {
	if pr.Family().IngressChart != "" {
		return fmt.Sprintf("%s.%s:%d", ingressGatewayName, istioNamespace, ingressPort)
	}
	return fmt.Sprintf("%s.%s:%d", plainIngressName, plainIngressNamespace, ingressPort)
}

// ingressURL is where load for a namespace enters through the gateway:
// its path prefix, then the graph's entry path.
func (p *kubePlatform) ingressURL(pr profile, ns string) string {
	path := p.workload.Graph.EntryPath
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return fmt.Sprintf("http://%s/%s%s", ingressHost(pr), ns, path)
}

// withIngress adds the ingress to a plan: the gateway, its routes and the
// outside generators' namespace. Without a workload (the charts a study
// installs, for its RBAC) it adds the gateway's chart alone.
func (p *kubePlatform) withIngress(pl meshPlan) (meshPlan, error) {
	pl.Ingress = true
	pl.Namespaces = append(pl.Namespaces, outsideNamespace)
	if pl.Profile.Family().IngressChart != "" {
		sel, tol := placementValues(p.ingressPlace())
		pl.Releases = append(pl.Releases, helmRelease{Chart: mesh.ChartIstioGateway, Name: ingressGatewayName, Namespace: istioNamespace, Values: map[string]any{
			// Reached from inside the cluster; a LoadBalancer in front
			// would add the cloud's hop, which is not the mesh's cost.
			"service":        map[string]any{"type": "ClusterIP"},
			"serviceAccount": map[string]any{"name": ingressAccount},
			"nodeSelector":   sel,
			"tolerations":    tol,
		}})
		if pl.Profile.Waypoint {
			// The gateway sends through the namespace's waypoint, so that
			// its L7 policy applies to ingress traffic too (Istio 1.23
			// and later read this label; 1.22 goes to the pods directly).
			pl.NSLabels[labelIngressUseWaypoint] = "true"
		}
		if p.workload == nil {
			return pl, nil
		}
		pl.Objects = append(pl.Objects, istioIngressRoutes(p.namespaces, p.workload.Graph.Entry, p.entryPort(), p.domain())...)
		return pl, nil
	}
	pl.Namespaces = append(pl.Namespaces, plainIngressNamespace)
	if p.workload == nil {
		return pl, nil
	}
	objs, err := plainIngress(p.namespaces, p.workload.Graph.Entry, p.entryPort(), p.domain(), p.ingressPlace(), p.opts.GatewayImage, pl.Profile)
	if err != nil {
		return meshPlan{}, err
	}
	pl.Objects = append(pl.Objects, objs...)
	return pl, nil
}

func (p *kubePlatform) entryPort() int {
	g := p.workload.Graph
	return g.Service(g.Entry).Port
}

// istioIngressRoutes are the Istio Gateway on the gateway's pods and one
// VirtualService routing /<ns>/ to each namespace's entry Service.
func istioIngressRoutes(namespaces []string, entry string, port int, domain string) []*unstructured.Unstructured {
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
		"metadata": meshMeta(istioNamespace, plainIngressName),
		"spec": map[string]any{
			"selector": map[string]any{"istio": "ingressgateway"},
			"servers": []any{map[string]any{
				"port":  map[string]any{"number": int64(ingressPort), "name": "http", "protocol": "HTTP"},
				"hosts": []any{"*"},
			}},
		},
	}}
	var routes []any
	for _, ns := range namespaces {
		routes = append(routes, map[string]any{
			"name":    ns,
			"match":   []any{map[string]any{"uri": map[string]any{"prefix": "/" + ns + "/"}}},
			"rewrite": map[string]any{"uri": "/"},
			"route": []any{map[string]any{"destination": map[string]any{
				"host": fmt.Sprintf("%s.%s.svc.%s", entry, ns, domain), "port": map[string]any{"number": int64(port)},
			}}},
		})
	}
	vs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": meshMeta(istioNamespace, plainIngressName),
		"spec": map[string]any{
			"hosts":    []any{"*"},
			"gateways": []any{istioNamespace + "/" + plainIngressName},
			"http":     routes,
		},
	}}
	return []*unstructured.Unstructured{gw, vs}
}

// plainIngress is the plain gateway: Envoy with a static configuration,
// a ServiceAccount, a Service on port 80 and a Deployment. Under Linkerd
// it is meshed as Linkerd meshes ingresses (inject: ingress), so that its
// calls are mTLS as the profile's inbound policy demands; otherwise it is
// a plain client of the entry Services.
func plainIngress(namespaces []string, entry string, port int, domain string, place placement, image string, pr profile) ([]*unstructured.Unstructured, error) {
	labels := map[string]string{labelComponent: componentIngress, labelApp: plainIngressName}
	annotations := maps.Clone(installers[pr.Mesh].ingressAnnotations)
	objs := []runtime.Object{
		&corev1.ServiceAccount{ObjectMeta: objMeta(plainIngressNamespace, plainIngressName, nil)},
		&corev1.ConfigMap{ObjectMeta: objMeta(plainIngressNamespace, plainIngressName, nil),
			Data: map[string]string{"envoy.yaml": plainIngressConfig(namespaces, entry, port, domain)}},
		&corev1.Service{
			ObjectMeta: objMeta(plainIngressNamespace, plainIngressName, labels),
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{labelApp: plainIngressName},
				Ports: []corev1.ServicePort{{Name: "http", Port: ingressPort, TargetPort: intstr.FromInt32(plainIngressListen),
					Protocol: corev1.ProtocolTCP, AppProtocol: ptr("http")}},
			},
		},
		&appsv1.Deployment{
			ObjectMeta: objMeta(plainIngressNamespace, plainIngressName, labels),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: plainIngressName}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: managedLabels(labels), Annotations: annotations},
					Spec: corev1.PodSpec{
						SecurityContext:    podSecurity(envoyUID),
						ServiceAccountName: plainIngressName,
						NodeSelector:       place.NodeSelector,
						Tolerations:        place.Tolerations,
						Containers: []corev1.Container{{
							Name: "envoy", Image: image, SecurityContext: gatewaySecurity(),
							Args:  []string{"-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"},
							Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: plainIngressListen, Protocol: corev1.ProtocolTCP}},
							ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
								TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, PeriodSeconds: 2},
							VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/envoy", ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: plainIngressName}},
						}}},
					},
				},
			},
		},
	}
	// They go with their namespace, which RemoveMesh deletes.
	return toUnstructured(objs)
}

// plainIngressConfig is the plain gateway's Envoy configuration: HTTP on
// plainIngressListen, /<ns>/ (stripped) to each namespace's entry Service
// by its DNS name, no route timeout (a closed loop at saturation waits as
// long as it must), and the admin interface on loopback only.
func plainIngressConfig(namespaces []string, entry string, port int, domain string) string {
	var routes, clusters strings.Builder
	for _, ns := range namespaces {
		fmt.Fprintf(&routes, `
              - match: {prefix: "/%[1]s/"}
                route: {cluster: %[1]s, prefix_rewrite: "/", timeout: 0s}`, ns)
		fmt.Fprintf(&clusters, `
  - name: %[1]s
    type: STRICT_DNS
    lb_policy: LEAST_REQUEST
    connect_timeout: 5s
    load_assignment:
      cluster_name: %[1]s
      endpoints:
      - lb_endpoints:
        - endpoint: {address: {socket_address: {address: %[2]s.%[1]s.svc.%[4]s, port_value: %[3]d}}}`, ns, entry, port, domain)
	}
	return fmt.Sprintf(`admin:
  address: {socket_address: {address: 127.0.0.1, port_value: 9901}}
static_resources:
  listeners:
  - name: ingress
    address: {socket_address: {address: 0.0.0.0, port_value: %d}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: ingress
          route_config:
            name: ingress
            virtual_hosts:
            - name: by-path
              domains: ["*"]
              routes:%s
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
  clusters:%s
`, plainIngressListen, routes.String(), clusters.String())
}
