package kube

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// testClusterSpec names the fake nodes by role label; the load node's
// taint must be tolerated by the load Jobs.
var testClusterSpec = infra.ClusterSpec{Nodes: []infra.NodeSpec{
	{Name: "app", Role: infra.NodeApp},
	{Name: "load", Role: infra.NodeLoad, Taints: []string{"meshbench.io/dedicated=load:NoSchedule"}},
	{Name: "mesh", Role: infra.NodeMesh},
}}

// emptyPrometheus serves a Prometheus API that answers but knows nothing
// (kwok pods use no CPU) until the test ends, and returns its URL.
func emptyPrometheus(t *testing.T) string {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	t.Cleanup(prom.Close)
	return prom.URL
}

// newTestPlatform makes a platform on the test cluster with Istio's charts
// from the module cache, acting as the least-privileged runner user, and
// removes all it made when the test ends.
func newTestPlatform(t *testing.T, c *testCluster) *kubePlatform {
	t.Helper()
	return newTestPlatformWith(t, c, func(*Options) {})
}

// newTestPlatformWith is newTestPlatform with options changed by set.
func newTestPlatformWith(t *testing.T, c *testCluster, set func(*Options)) *kubePlatform {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	o := Options{
		Kubeconfig: c.Kubeconfig, Context: runnerContext, Image: "meshbench.test/meshbench:it", Timeout: 2 * time.Minute, Logger: logger,
		Prometheus: emptyPrometheus(t), Charts: testCharts(c),
		// The tests' phases are short: a test Prometheus that scrapes
		// this often would sample them.
		SampleInterval: 500 * time.Millisecond,
	}
	set(&o)
	p, err := newPlatform(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := p.Down(ctx); err != nil {
			t.Errorf("clean-up: %v", err)
		}
	})
	return p
}

// testCharts are Istio's charts from the module cache.
func testCharts(c *testCluster) map[string]mesh.ChartSource {
	return map[string]mesh.ChartSource{
		mesh.ChartIstioBase:    {Chart: c.Charts + "/base"},
		mesh.ChartIstiod:       {Chart: c.Charts + "/istio-control/istio-discovery"},
		mesh.ChartIstioCNI:     {Chart: c.Charts + "/istio-cni"},
		mesh.ChartZtunnel:      {Chart: c.Charts + "/ztunnel"},
		mesh.ChartIstioGateway: {Chart: c.Charts + "/gateway"},
	}
}

func TestIntegrationUpChecksRoles(t *testing.T) {
	c := needCluster(t)
	p := newTestPlatform(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		name    string
		spec    infra.ClusterSpec
		wantErr []string
	}{
		{name: "all roles present", spec: testClusterSpec},
		{name: "load taint not on any node", spec: infra.ClusterSpec{Nodes: []infra.NodeSpec{
			{Role: infra.NodeApp}, {Role: infra.NodeLoad, Taints: []string{"other=x:NoSchedule"}},
		}}, wantErr: []string{"nodes[1] role load", "other=x:NoSchedule"}},
		{name: "two app nodes wanted, one labelled", spec: infra.ClusterSpec{Nodes: []infra.NodeSpec{
			{Role: infra.NodeApp}, {Role: infra.NodeApp}, {Role: infra.NodeLoad},
		}}, wantErr: []string{"nodes[1] role app", "meshbench.io/role=app"}},
		{name: "no load role", spec: infra.ClusterSpec{Nodes: []infra.NodeSpec{{Role: infra.NodeApp}}},
			wantErr: []string{"no load node"}},
		{name: "custom labels", spec: infra.ClusterSpec{Nodes: []infra.NodeSpec{
			{Role: infra.NodeApp, Labels: map[string]string{"kubernetes.io/hostname": "mb-app-1"}},
			{Role: infra.NodeLoad, Labels: map[string]string{"kubernetes.io/hostname": "mb-mesh-1"}},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Up(ctx, tc.spec)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Up: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Up: no error, want one")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	info, err := p.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "kubernetes" || info.Versions["kubernetes"] != "v1.34.4" {
		t.Errorf("Info = %+v, want kubernetes v1.34.4", info)
	}
}

// TestIntegrationManifestsDryRun has the API server validate and default
// every golden workload manifest (server-side apply, dry run), and checks
// that the dry run stored nothing.
func TestIntegrationManifestsDryRun(t *testing.T) {
	c := needCluster(t)
	p := newTestPlatform(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range goldenCases {
		if !strings.HasPrefix(tc.golden, "workload-") {
			continue // the mesh objects' CRDs come with the charts
		}
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.objects(t)
			// Namespaced objects are only checked in a namespace that
			// exists: create those for real, as this run's (Down removes
			// them).
			var nss []*unstructured.Unstructured
			for _, o := range objs {
				if o.GetKind() == "Namespace" {
					nss = append(nss, o)
				}
			}
			if err := p.apply(ctx, nss); err != nil {
				t.Fatal(err)
			}
			if err := p.c.apply(ctx, objs, true); err != nil {
				t.Fatalf("server-side dry run: %v", err)
			}
			deps, err := c.Client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
			if err != nil {
				t.Fatal(err)
			}
			if len(deps.Items) != 0 {
				t.Fatalf("the dry run stored %d deployments", len(deps.Items))
			}
		})
	}
	// And a manifest the server must refuse, so that the dry run is known
	// to check: a negative replica count.
	bad := workloadCase("tiered", 1, map[string]int{"tier-1-app-a": -1})(t)
	if err := p.c.apply(ctx, bad, true); err == nil || !strings.Contains(err.Error(), "replicas") {
		t.Errorf("dry run of a Deployment with -1 replicas: err = %v, want the server to refuse it", err)
	}
}

// TestIntegrationSidecarVerification checks sidecar verification on real
// (simulated) pods: pods given a fake istio-proxy container pass, the
// Deployment left without one is named.
func TestIntegrationSidecarVerification(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := newTestPlatform(t, c)
	c.dumpOnFailure(t, "ns-1")
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "bookinfo"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	deps, err := c.Client.AppsV1().Deployments("ns-1").List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
	if err != nil {
		t.Fatal(err)
	}
	// What injection does, by hand: a proxy container in the template.
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"istio-proxy","image":"proxyv2"}]}}}}`)
	for _, d := range deps.Items {
		if d.Name == "details" {
			continue
		}
		if _, err := c.Client.AppsV1().Deployments("ns-1").Patch(ctx, d.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.waitRollouts(ctx, p.namespaces, selectorApps); err != nil {
		t.Fatal(err)
	}
	pods, err := p.appPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, profile, check string
		pass                 bool
		mention              string
	}{
		{name: "istio sidecar missing in details", profile: mesh.ProfileSidecar, check: "sidecar-injected", mention: "ns-1/details-"},
		{name: "linkerd proxy missing everywhere", profile: mesh.ProfileLinkerd, check: "sidecar-injected", mention: "6 of 6"},
		{name: "baseline sees proxies", profile: mesh.ProfileBaseline, check: "no-data-plane", mention: "5 of 6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := findCheck(podChecks(mustProfile(t, tc.profile), pods), tc.check)
			if ch.Pass != tc.pass || !strings.Contains(ch.Detail, tc.mention) {
				t.Errorf("%s = %+v, want pass=%v mentioning %q", tc.check, ch, tc.pass, tc.mention)
			}
		})
	}
}

func annotate(t *testing.T, ctx context.Context, c *testCluster, pod corev1.Pod, key, value string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + key + `":"` + value + `"}}}`)
	if _, err := c.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func findCheck(checks []mesh.Check, name string) mesh.Check {
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	return mesh.Check{Name: name, Detail: "check not made"}
}

func assertChecks(t *testing.T, checks []mesh.Check, want map[string]bool) {
	t.Helper()
	for name, pass := range want {
		if ch := findCheck(checks, name); ch.Pass != pass || ch.Detail == "check not made" {
			t.Errorf("check %s = %+v, want pass=%v", name, ch, pass)
		}
	}
	if len(checks) != len(want) {
		t.Errorf("%d checks, want %d: %+v", len(checks), len(want), checks)
	}
}

func releaseNames(rels []installedRelease) string {
	var names []string
	for _, r := range rels {
		names = append(names, r.Name)
	}
	return strings.Join(names, ",")
}
