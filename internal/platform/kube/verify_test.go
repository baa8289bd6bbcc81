package kube

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
)

// testPod is an app pod with the given extra containers and annotations.
func testPod(name string, ready bool, annotations map[string]string, containers ...string) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-1", Name: name, Annotations: annotations,
			Labels: map[string]string{labelComponent: componentApp, labelApp: name}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: appContainer}}},
	}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c})
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return pod
}

func TestPodChecks(t *testing.T) {
	t.Parallel()
	enrolled := map[string]string{annotRedirection: "enabled"}
	always := corev1.ContainerRestartPolicyAlways
	native := testPod("native", true, nil)
	native.Spec.InitContainers = []corev1.Container{{Name: "istio-proxy", RestartPolicy: &always}}
	oneShot := testPod("oneshot", true, nil)
	oneShot.Spec.InitContainers = []corev1.Container{{Name: "istio-proxy"}}
	tests := []struct {
		name    string
		profile string
		pods    []corev1.Pod
		check   string
		pass    bool
		mention string
	}{
		{name: "sidecar everywhere", profile: mesh.ProfileSidecar, check: "sidecar-injected", pass: true,
			pods: []corev1.Pod{testPod("a", true, nil, "istio-proxy"), testPod("b", true, nil, "istio-proxy")}},
		{name: "one pod unmeshed", profile: mesh.ProfileSidecar, check: "sidecar-injected", mention: "1 of 2 pods fail",
			pods: []corev1.Pod{testPod("a", true, nil, "istio-proxy"), testPod("b", true, nil)}},
		{name: "native sidecar counts", profile: mesh.ProfileSidecar, check: "sidecar-injected", pass: true, pods: []corev1.Pod{native}},
		{name: "a one-shot init container is no sidecar", profile: mesh.ProfileSidecar, check: "sidecar-injected", mention: "ns-1/oneshot", pods: []corev1.Pod{oneShot}},
		{name: "wrong mesh's proxy", profile: mesh.ProfileLinkerd, check: "sidecar-injected", mention: "ns-1/a",
			pods: []corev1.Pod{testPod("a", true, nil, "istio-proxy")}},
		{name: "ambient enrolled", profile: mesh.ProfileAmbient, check: "ambient-enrolled", pass: true,
			pods: []corev1.Pod{testPod("a", true, enrolled), testPod("b", true, enrolled)}},
		{name: "ambient pod with a sidecar too", profile: mesh.ProfileAmbient, check: "ambient-enrolled", mention: "ns-1/b",
			pods: []corev1.Pod{testPod("a", true, enrolled), testPod("b", true, enrolled, "istio-proxy")}},
		{name: "ambient pod not enrolled", profile: mesh.ProfileAmbientWaypoint, check: "ambient-enrolled", mention: "ns-1/b",
			pods: []corev1.Pod{testPod("a", true, enrolled), testPod("b", true, nil)}},
		{name: "baseline clean", profile: mesh.ProfileBaseline, check: "no-data-plane", pass: true, pods: []corev1.Pod{testPod("a", true, nil)}},
		{name: "baseline left enrolled", profile: mesh.ProfileBaseline, check: "no-data-plane", mention: "ns-1/a", pods: []corev1.Pod{testPod("a", true, enrolled)}},
		{name: "not ready", profile: mesh.ProfileBaseline, check: "pods-ready", mention: "ns-1/b", pods: []corev1.Pod{testPod("a", true, nil), testPod("b", false, nil)}},
		{name: "no pods is no pass", profile: mesh.ProfileSidecar, check: "sidecar-injected", mention: "no app pods"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := findCheck(podChecks(mustProfile(t, tc.profile), tc.pods), tc.check)
			if c.Pass != tc.pass || !strings.Contains(c.Detail, tc.mention) {
				t.Errorf("%s = %+v, want pass=%v mentioning %q", tc.check, c, tc.pass, tc.mention)
			}
		})
	}
}

func TestNodeAgentCheck(t *testing.T) {
	t.Parallel()
	pods := []corev1.Pod{testPod("a", true, nil), testPod("b", true, nil)}
	pods[1].Spec.NodeName = "n2"
	if c := nodeAgentCheck("z", "ztunnel", pods, map[string]bool{"n1": true, "n2": true}); !c.Pass {
		t.Errorf("all nodes covered: %+v", c)
	}
	if c := nodeAgentCheck("z", "ztunnel", pods, map[string]bool{"n1": true, "n3": true}); c.Pass || !strings.Contains(c.Detail, "n2") {
		t.Errorf("n2 uncovered: %+v", c)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	pod := func(ns string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: labels}}
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container string
		role      metrics.Role
		ok        bool
	}{
		{"app container", pod("ns-1", map[string]string{labelComponent: componentApp}), appContainer, metrics.RoleApp, true},
		{"istio sidecar", pod("ns-1", map[string]string{labelComponent: componentApp}), "istio-proxy", metrics.RoleSidecar, true},
		{"linkerd sidecar", pod("ns-1", map[string]string{labelComponent: componentApp}), "linkerd-proxy", metrics.RoleSidecar, true},
		{"load generator", pod("ns-1", map[string]string{labelComponent: componentLoad}), jobContainer, metrics.RoleLoad, true},
		{"load generator's sidecar", pod("ns-1", map[string]string{labelComponent: componentLoad}), "istio-proxy", metrics.RoleSidecar, true},
		{"waypoint", pod("ns-1", map[string]string{labelGatewayName: waypointName}), "istio-proxy", metrics.RoleWaypoint, true},
		{"ztunnel", pod(istioNamespace, map[string]string{"app": "ztunnel"}), "istio-proxy", metrics.RoleNodeProxy, true},
		{"istio-cni", pod(istioNamespace, map[string]string{"k8s-app": "istio-cni-node"}), "install-cni", metrics.RoleCNI, true},
		{"istiod", pod(istioNamespace, map[string]string{"app": "istiod"}), "discovery", metrics.RoleControlPlane, true},
		{"linkerd destination", pod(linkerdNamespace, map[string]string{"linkerd.io/control-plane-component": "destination"}), "destination", metrics.RoleControlPlane, true},
		{"cilium agent is data plane", pod(ciliumNamespace, map[string]string{"k8s-app": "cilium"}), "cilium-agent", metrics.RoleNodeProxy, true},
		{"spire agent is data plane", pod(spireNamespace, map[string]string{"app": "spire-agent"}), "spire-agent", metrics.RoleNodeProxy, true},
		{"spire server", pod(spireNamespace, map[string]string{"app": "spire-server"}), "spire-server", metrics.RoleControlPlane, true},
		{"plain ingress gateway", pod(plainIngressNamespace, map[string]string{labelComponent: componentIngress}), "envoy", metrics.RoleIngress, true},
		{"ingress gateway", pod(istioNamespace, map[string]string{"istio": "ingressgateway"}), "istio-proxy", metrics.RoleIngress, true},
		{"coredns is not measured", pod("kube-system", map[string]string{"k8s-app": "kube-dns"}), "coredns", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			role, ok := classify(tc.pod, tc.container)
			if role != tc.role || ok != tc.ok {
				t.Errorf("classify = %q, %v; want %q, %v", role, ok, tc.role, tc.ok)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"identity": map[string]any{"issuer": map[string]any{"tls": map[string]any{"crtPEM": "CERT", "keyPEM": "SECRET"}}},
		"proxy":    map[string]any{"cores": 2},
		"apiKey":   "SECRET",
		"keys":     []any{"kept: not a string field"},
	}
	out, err := json.Marshal(redact(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "SECRET") || !strings.Contains(string(out), "CERT") || !strings.Contains(string(out), `"cores":2`) {
		t.Errorf("redacted = %s", out)
	}
	if in["apiKey"] != "SECRET" {
		t.Error("redact changed its input")
	}
}
