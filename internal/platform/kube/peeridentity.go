package kube

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/mesh"
)

// identityEvidence is where a mesh's own proxies count the calls they
// accepted over mTLS, by the caller's identity: the metric, the labels a
// sample must carry, and the proxy port and path that serve it.
type identityEvidence struct {
	Port    int
	Path    string
	Metrics []string
	// Labels are what a sample counting the caller's mTLS calls carries.
	Labels func(ns, sa string) map[string]string
	// NotReporter, when set, is a reporter label whose samples do not
	// count: the client side's word on a handshake is not the server's.
	NotReporter string
}

// istioEvidence: Istio's proxies (sidecars and waypoints, port 15090)
// count requests, and ztunnel (15020) connections, with the peer
// principal from the handshake and connection_security_policy mutual_tls.
func istioEvidence(port int, path string, metrics ...string) identityEvidence {
	return identityEvidence{Port: port, Path: path, Metrics: metrics, NotReporter: "source",
		Labels: func(ns, sa string) map[string]string {
			return map[string]string{"source_principal": "spiffe://" + principal(ns, sa), "connection_security_policy": "mutual_tls"}
		}}
}

var (
	istioProxyEvidence = istioEvidence(15090, "/stats/prometheus", "istio_requests_total")
	ztunnelEvidence    = istioEvidence(15020, "/metrics", "istio_tcp_connections_opened_total")
	// linkerdEvidence: linkerd-proxy's admin port counts inbound requests
	// and connections with tls="true" and the client's identity as its
	// certificate names it.
	linkerdEvidence = identityEvidence{Port: 4191, Path: "/metrics", Metrics: []string{"request_total", "tcp_open_total"},
		Labels: func(ns, sa string) map[string]string {
			return map[string]string{"direction": "inbound", "tls": "true",
				"client_id": sa + "." + ns + ".serviceaccount.identity.linkerd.cluster.local"}
		}}
)

// identityCount sums the samples in a Prometheus text exposition that
// count calls accepted over mTLS from identity sa in namespace ns.
func (e identityEvidence) identityCount(r io.Reader, ns, sa string) (float64, error) {
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, err
	}
	want := e.Labels(ns, sa)
	var n float64
	for _, name := range e.Metrics {
		f := families[name]
		if f == nil {
			continue
		}
		for _, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if e.NotReporter != "" && labels["reporter"] == e.NotReporter {
				continue
			}
			if matches(labels, want) {
				n += sampleValue(m)
			}
		}
	}
	return n, nil
}

func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// evidenceSources are the pods whose proxies hold a profile's evidence,
// as namespace and label selector, and what they serve; none for a mesh
// whose proxies count no peer identities (Cilium authenticates nodes'
// identities out of band and its data path carries no certificate).
func (p *kubePlatform) evidenceSources(pr profile, ns string) ([][2]string, identityEvidence, bool) {
	entry := labelApp + "=" + p.workload.Graph.Entry + "," + labelComponent + "=" + componentApp
	switch {
	case pr.Mesh == mesh.Linkerd:
		return [][2]string{{ns, entry}}, linkerdEvidence, true
	case pr.Mesh == mesh.Istio && pr.Plane == mesh.PlaneSidecar:
		return [][2]string{{ns, entry}}, istioProxyEvidence, true
	case pr.Mesh == mesh.Istio && pr.Waypoint:
		// The waypoint terminates the caller's mTLS.
		return [][2]string{{ns, labelGatewayName + "=" + waypointName}}, istioProxyEvidence, true
	case pr.Mesh == mesh.Istio:
		return [][2]string{{istioNamespace, "app=ztunnel"}}, ztunnelEvidence, true
	}
	return nil, identityEvidence{}, false
}

// peerIdentityCheck reads, after the meshed control call, the mesh's own
// count of calls its server side accepted over mTLS from the load
// generators' identity, through the API server's pod proxy. It passes
// when that count is above zero; nil when the mesh keeps no such count.
func (p *kubePlatform) peerIdentityCheck(ctx context.Context, pr profile) *mesh.Check {
	ns := p.namespaces[0]
	sources, ev, ok := p.evidenceSources(pr, ns)
	if !ok {
		return nil
	}
	c := &mesh.Check{Name: mesh.CheckPeerIdentity}
	what := fmt.Sprintf("calls accepted over mTLS from %s, as %s counts them (%s)", principal(ns, loadServiceAccount), pr.Mesh, strings.Join(ev.Metrics, ", "))
	var total float64
	var read int
	var problems []string
	for _, src := range sources {
		list, err := p.c.kube.CoreV1().Pods(src[0]).List(ctx, metav1.ListOptions{LabelSelector: src[1]})
		if err != nil {
			c.Detail = what + ": could not list " + src[1] + " pods: " + err.Error()
			return c
		}
		for i := range list.Items {
			pod := &list.Items[i]
			if pod.Status.Phase != corev1.PodRunning {
				continue
			}
			n, err := p.readEvidence(ctx, pod, ev, ns)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			read++
			total += n
		}
	}
	c.Pass = total > 0
	c.Detail = fmt.Sprintf("%s: %g in %d pods read", what, total, read)
	if len(problems) > 0 {
		c.Detail += fmt.Sprintf("; %d could not be read (first: %s)", len(problems), problems[0])
	}
	return c
}

// readEvidence reads one proxy's metrics through the API server's pod
// proxy and counts the load generators' mTLS calls in them.
func (p *kubePlatform) readEvidence(ctx context.Context, pod *corev1.Pod, ev identityEvidence, ns string) (float64, error) {
	body, err := p.c.kube.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, strconv.Itoa(ev.Port), ev.Path, nil).Stream(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s/%s:%d%s: %w", pod.Namespace, pod.Name, ev.Port, ev.Path, err)
	}
	defer body.Close()
	n, err := ev.identityCount(bounded(body, maxProxyStats, "the metrics page"), ns, loadServiceAccount)
	if err != nil {
		return 0, fmt.Errorf("%s/%s:%d%s: %w", pod.Namespace, pod.Name, ev.Port, ev.Path, err)
	}
	return n, nil
}
