package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
)

// TestIntegrationIngressCell runs ingress cells on the test cluster.
// Baseline goes all the way: the plain gateway is deployed on the mesh
// node, the ingress probe calls through it from the unmeshed namespace,
// and Measure runs the outside generator there, on the load node, reading
// its result exactly. Istio's gateway chart then installs after istiod,
// as far as kwok allows: its pod must be injected by istiod's webhook,
// which no istiod answers here, and the install must say so.
func TestIntegrationIngressCell(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	p := newTestPlatformWith(t, c, func(o *Options) { o.Ingress = true })
	c.dumpOnFailure(t, "ns-1", plainIngressNamespace, outsideNamespace, istioNamespace)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "bookinfo"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}

	checks, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileBaseline})
	if err != nil {
		t.Fatalf("InstallMesh baseline with ingress: %v", err)
	}
	assertChecks(t, checks, map[string]bool{"pods-ready": true, "no-data-plane": true, "ingress-routes": true, checkInstalled: true})
	// What ran is recorded with the cell: the gateway's image among the
	// workload's, the cluster's version and the nodes' facts.
	facts := findCheck(checks, checkInstalled).Facts
	if !strings.Contains(facts["images"], defaultGatewayImage) || facts["kubernetes"] != "v1.34.4" || !strings.Contains(facts["node/load/mb-load-1"], "kubelet") {
		t.Errorf("installed facts %v, want the gateway image, v1.34.4 and the load node", facts)
	}
	gw, err := c.Client.AppsV1().Deployments(plainIngressNamespace).Get(ctx, plainIngressName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gw.Status.ReadyReplicas != 1 || gw.Spec.Template.Spec.NodeSelector[labelRole] != "mesh" {
		t.Errorf("plain gateway: %d ready, node selector %v; want 1 on the mesh node", gw.Status.ReadyReplicas, gw.Spec.Template.Spec.NodeSelector)
	}

	m, err := p.Measure(ctx, infra.LoadSpec{Path: infra.PathIngress,
		Options: load.Options{Connections: 2, Requests: 20, Timeout: time.Second}})
	if err != nil {
		t.Fatalf("Measure through the ingress: %v", err)
	}
	want := c.GeneratorResult
	if len(m.Generators) != 1 || !m.Generators[0].Latency.Equal(want.Latency) {
		t.Fatalf("generators %+v, want the outside generator's one result", m.Generators)
	}
	roles := map[metrics.Role][]metrics.Component{}
	for _, s := range m.Resources {
		roles[s.Component.Role] = append(roles[s.Component.Role], s.Component)
	}
	if l := roles[metrics.RoleLoad]; len(l) != 1 || l[0].Namespace != outsideNamespace || l[0].Node != "mb-load-1" {
		t.Errorf("load components %+v, want one outside generator on the load node", l)
	}
	if in := roles[metrics.RoleIngress]; len(in) != 1 || in[0].Namespace != plainIngressNamespace || in[0].Node != "mb-mesh-1" {
		t.Errorf("ingress components %+v, want the plain gateway on the mesh node", in)
	}

	// Istio ambient: the gateway chart goes in after istiod, placed on
	// the mesh node; its pods wait for istiod's injection, which kwok
	// cannot give, so the install fails naming the gateway, and rolls
	// back.
	_, err = p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileAmbient})
	if err == nil || !strings.Contains(err.Error(), ingressGatewayName) {
		t.Fatalf("InstallMesh ambient with ingress: err = %v, want the Istio gateway's rollout to fail for want of injection", err)
	}
	t.Logf("Istio gateway install, as far as kwok allows: %v", err)
	if rels, _ := p.installedReleases(ctx, p.opts.RunID); len(rels) != 0 {
		t.Errorf("releases left after the failed install: %s", releaseNames(rels))
	}

	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("clean-up left %d objects behind: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}

// TestIntegrationUpRefusesCilium checks that a study naming the cilium
// profile is refused by Up, against a cluster that does not run Cilium,
// before anything is created.
func TestIntegrationUpRefusesCilium(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	p := newTestPlatformWith(t, c, func(o *Options) {
		o.Meshes = []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}, {Profile: mesh.ProfileCilium}}
	})
	err := p.Up(ctx, testClusterSpec)
	if err == nil || !strings.Contains(err.Error(), "profile cilium") || !strings.Contains(err.Error(), "never installs") {
		t.Fatalf("Up = %v, want the cilium profile refused", err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("a refused study created %d objects: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}
