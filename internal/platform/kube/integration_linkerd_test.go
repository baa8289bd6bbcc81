package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/resources"
)

// TestIntegrationLinkerd installs Linkerd from chart directories the user
// names, here the Linkerd-shaped test charts in testdata (not Linkerd: see
// their README), and runs the install, verification and removal paths:
// the control plane on the mesh node with meshbench's values (a fresh
// trust anchor and issuer, the proxy's requests), the workload namespaces
// annotated for injection and the pods re-created, verification naming
// the pods without a linkerd-proxy (kwok injects none), and removal
// leaving the cluster as it was.
func TestIntegrationLinkerd(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	charts, err := filepath.Abs("testdata/linkerd-test-charts")
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPlatformWith(t, c, func(o *Options) {
		o.Charts[mesh.ChartLinkerdCRDs] = mesh.ChartSource{Chart: filepath.Join(charts, "linkerd-crds")}
		o.Charts[mesh.ChartLinkerdControl] = mesh.ChartSource{Chart: filepath.Join(charts, "linkerd-control-plane")}
	})
	c.dumpOnFailure(t, "ns-1", linkerdNamespace)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}

	checks, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileLinkerd, ProxyCPU: "150m"})
	if err == nil || !strings.Contains(err.Error(), "sidecar-injected") {
		t.Fatalf("InstallMesh linkerd = %v, want verification to fail: kwok injects no linkerd-proxy", err)
	}
	want := map[string]bool{"pods-ready": true, "sidecar-injected": false, "meshed-call-succeeds": true, "plaintext-refused": false, mesh.CheckPeerIdentity: false, checkInstalled: true}
	assertChecks(t, checks, want)
	// The record of what was installed: the charts' own versions and
	// where they came from, the values as installed with the issuer's
	// private key redacted, and their hash.
	facts := findCheck(checks, checkInstalled).Facts
	if got := facts["chart/linkerd-control-plane"]; !strings.HasPrefix(got, "linkerd-control-plane 1.16.11-meshbench-test from "+charts) {
		t.Errorf("chart record %q", got)
	}
	if v := facts["values/linkerd-control-plane"]; !strings.Contains(v, `"keyPEM":"(redacted)"`) || strings.Contains(v, "PRIVATE KEY") || !strings.Contains(v, `"request":"150m"`) {
		t.Errorf("values record %s: want the values as installed, the private key redacted", v)
	}
	if len(facts["values-sha256/linkerd-control-plane"]) != 64 || !strings.Contains(facts["images"], "cr.l5d.io/linkerd/controller:stable-2.14.10") {
		t.Errorf("facts %v lack the values' hash or the control plane's image", facts)
	}
	// The plaintext probe ran past linkerd-proxy's UID beside a control
	// container of its pod, and both logs were read: kwok's generators
	// all report 2xx, so plaintext was answered and the check fails.
	if ch := findCheck(checks, "plaintext-refused"); !strings.Contains(ch.Detail, "UID 2102") || !strings.Contains(ch.Detail, "the same pod's meshed GET: 20 requests, 20 2xx") {
		t.Errorf("plaintext-refused = %+v, want the probe past the proxy's UID judged beside its pod's control", ch)
	}
	if ch := findCheck(checks, "sidecar-injected"); !strings.Contains(ch.Detail, "4 of 4") {
		t.Errorf("sidecar-injected = %+v, want every pod named as without linkerd-proxy", ch)
	}
	if got := releaseNames(mustReleases(t, ctx, p)); got != "linkerd-crds,linkerd-control-plane" {
		t.Errorf("releases in install order = %s", got)
	}
	if v := p.mesh.Versions; v["linkerd-crds"] != "1.8.0-meshbench-test" || v["linkerd-control-plane"] != "1.16.11-meshbench-test" {
		t.Errorf("installed versions %v, want the test charts'", v)
	}

	// The control plane got meshbench's values and placement.
	cfg, err := c.Client.CoreV1().ConfigMaps(linkerdNamespace).Get(ctx, "linkerd-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg.Data["identityTrustAnchorsPEM"], "BEGIN CERTIFICATE") || cfg.Data["proxyCPURequest"] != "150m" ||
		cfg.Data["proxyMemoryRequest"] != resources.FormatMemory(mesh.DefaultProxy.MemRequestBytes) || cfg.Data["proxyCores"] != "2" {
		t.Errorf("linkerd-config = %v, want a trust anchor and the proxy's 150m / %s, 2 cores", cfg.Data, resources.FormatMemory(mesh.DefaultProxy.MemRequestBytes))
	}
	for _, name := range []string{"linkerd-identity", "linkerd-destination", "linkerd-proxy-injector"} {
		d, err := c.Client.AppsV1().Deployments(linkerdNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.ReadyReplicas != 1 || d.Spec.Template.Spec.NodeSelector[labelRole] != "mesh" {
			t.Errorf("%s: %d ready, node selector %v; want 1 on the mesh node", name, d.Status.ReadyReplicas, d.Spec.Template.Spec.NodeSelector)
		}
	}
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, "ns-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Annotations[annotLinkerdInject] != "enabled" || ns.Annotations[annotLinkerdInbound] != "all-authenticated" {
		t.Errorf("ns-1 annotations %v, want injection and all-authenticated inbound", ns.Annotations)
	}
	pods, err := p.appPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods {
		if pod.Annotations[annotDataplane] != "linkerd-proxy" {
			t.Errorf("pod %s was not re-created for linkerd-proxy (annotations %v)", pod.Name, pod.Annotations)
		}
	}

	if err := p.RemoveMesh(ctx); err != nil {
		t.Fatal(err)
	}
	if rels := mustReleases(t, ctx, p); len(rels) != 0 {
		t.Errorf("releases left after RemoveMesh: %s", releaseNames(rels))
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, linkerdNamespace, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s left after RemoveMesh", linkerdNamespace)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("clean-up left %d objects behind: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}

func mustReleases(t *testing.T, ctx context.Context, p *kubePlatform) []installedRelease {
	t.Helper()
	rels, err := p.installedReleases(ctx, p.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return rels
}
