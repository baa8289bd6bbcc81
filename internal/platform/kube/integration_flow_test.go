package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

// TestIntegrationFullFlow runs a study's whole flow on the test cluster:
// Up, Deploy, InstallMesh (Istio ambient from its charts) with
// verification, Measure, RemoveMesh and Down, then checks that the
// cluster is left as it was found.
func TestIntegrationFullFlow(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	p := newTestPlatform(t, c)
	c.dumpOnFailure(t, "ns-1", istioNamespace)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: 3}); err != nil {
		t.Fatal(err)
	}
	pods, err := p.appPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 12 {
		t.Fatalf("%d app pods, want 12 (4 services in 3 namespaces)", len(pods))
	}
	for _, pod := range pods {
		if pod.Spec.NodeName != "mb-app-1" {
			t.Errorf("pod %s/%s on node %q, want the app node", pod.Namespace, pod.Name, pod.Spec.NodeName)
		}
	}

	// Ambient from Istio's charts, installed in-process with Helm.
	checks, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileAmbient})
	if err == nil {
		t.Fatal("InstallMesh passed verification, but no CNI agent enrolled the simulated pods")
	}
	// The meshed probe and its neighbour, the plaintext probe left out of
	// ambient, both run in ns-1 and read kwok's 2xx result from their
	// logs: plaintext was answered, so the check fails, judged beside a
	// control on its node.
	want := map[string]bool{"pods-ready": true, "ambient-enrolled": false, "namespaces-labelled": true,
		"ztunnel-on-app-nodes": true, "meshed-call-succeeds": true, "plaintext-refused": false, mesh.CheckPeerIdentity: false, checkInstalled: true}
	assertChecks(t, checks, want)
	if ch := findCheck(checks, "plaintext-refused"); !strings.Contains(ch.Detail, "left out of ambient (istio.io/dataplane-mode=none)") ||
		!strings.Contains(ch.Detail, "20 requests, 20 2xx") || !strings.Contains(ch.Detail, "meshed-call-succeeds from a neighbour (same namespace ns-1 and node mb-load-1)") {
		t.Errorf("plaintext probe detail %q, want the opted-out pod's answered GETs judged beside its neighbour", ch.Detail)
	}
	// The scheduler puts the neighbours where the plan says: the same
	// namespace and node, the plaintext probe's pod labelled out of ambient.
	var neighbours []jobSpec
	for _, pb := range p.probes(p.mesh.Plan) {
		if pb.Check == controlCheck || pb.Check == mesh.CheckPlaintextRefused {
			neighbours = append(neighbours, pb.Job)
		}
	}
	ran, err := p.runJobs(ctx, neighbours)
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 2 {
		t.Fatalf("%d probe pods ran, want the control and its neighbour", len(ran))
	}
	for _, r := range ran {
		if r.Pod.Namespace != "ns-1" || r.Pod.Spec.NodeName != "mb-load-1" || r.Result == nil {
			t.Errorf("probe pod %s/%s on %q (result %v), want ns-1 on mb-load-1 with a result", r.Pod.Namespace, r.Pod.Name, r.Pod.Spec.NodeName, r.Result != nil)
		}
	}
	if l := ran[1].Pod.Labels[labelDataplane]; l != dataplaneNone || ran[0].Pod.Labels[labelDataplane] != "" {
		t.Errorf("the plaintext probe's pod has %s=%q, the control's %q: want only the plaintext one out of ambient", labelDataplane, l, ran[0].Pod.Labels[labelDataplane])
	}
	// kwok's ztunnel pods serve no metrics: nothing counted, no pass.
	if ch := findCheck(checks, mesh.CheckPeerIdentity); !strings.Contains(ch.Detail, "istio_tcp_connections_opened_total") || !strings.Contains(ch.Detail, ": 0 in ") {
		t.Errorf("peer-identity detail %q does not say it read ztunnel's count and found none", ch.Detail)
	}
	rels, err := p.installedReleases(ctx, p.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got := releaseNames(rels); got != "istio-base,istiod,istio-cni,ztunnel" {
		t.Errorf("releases in install order = %s", got)
	}

	// With Istio's CRDs in, the API server validates the golden mesh
	// objects too (schema and CEL rules), by server-side dry run. The
	// Gateway API is not installed, so waypoints must be refused clearly.
	for _, tc := range goldenCases {
		if !strings.HasPrefix(tc.golden, "mesh-") {
			continue
		}
		var objs []*unstructured.Unstructured
		for _, o := range tc.objects(t) {
			// The Gateway API's Gateway is absent; Istio's is checked.
			if o.GroupVersionKind() != gatewayGVK {
				objs = append(objs, o)
			}
			// The plain gateway's namespace, as InstallMesh makes it
			// (RemoveMesh deletes it).
			if o.GetNamespace() == plainIngressNamespace {
				if err := p.ensureNamespace(ctx, plainIngressNamespace, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := p.c.apply(ctx, objs, true); err != nil {
			t.Errorf("%s: server-side dry run: %v", tc.golden, err)
		}
	}
	if err := p.requireGatewayAPI(ctx); err == nil || !strings.Contains(err.Error(), "Gateway API CRDs") {
		t.Errorf("requireGatewayAPI = %v, want the missing CRDs named", err)
	}

	// Simulate istio-cni enrolling every pod but one; verification must
	// name the one left out.
	pods, _ = p.appPods(ctx)
	left := pods[len(pods)-1]
	for _, pod := range pods[:len(pods)-1] {
		annotate(t, ctx, c, pod, annotRedirection, "enabled")
	}
	checks, err = p.verify(ctx, p.mesh.Plan)
	if err != nil {
		t.Fatal(err)
	}
	enrolled := findCheck(checks, "ambient-enrolled")
	if enrolled.Pass || !strings.Contains(enrolled.Detail, left.Namespace+"/"+left.Name) || !strings.Contains(enrolled.Detail, "1 of 12") {
		t.Errorf("ambient-enrolled = %+v, want a failure naming %s/%s alone", enrolled, left.Namespace, left.Name)
	}
	annotate(t, ctx, c, left, annotRedirection, "enabled")
	checks, _ = p.verify(ctx, p.mesh.Plan)
	if ch := findCheck(checks, "ambient-enrolled"); !ch.Pass {
		t.Errorf("ambient-enrolled = %+v after every pod was enrolled", ch)
	}

	// Load: the Job runs on the tainted load node and its result comes
	// back through the pod's log, exactly.
	m, err := p.Measure(ctx, infra.LoadSpec{Options: load.Options{Rate: 10, Duration: 2 * time.Second, Connections: 1, Timeout: time.Second}})
	if err != nil {
		t.Fatalf("Measure: %v", err)
	}
	wantRes := c.GeneratorResult
	if len(m.Generators) != 1 || !m.Generators[0].Latency.Equal(wantRes.Latency) || m.Generators[0].Requests != wantRes.Requests {
		t.Fatalf("Measure generators = %+v, want the one result the generator logged", m.Generators)
	}
	if !m.Start.Equal(wantRes.Start) || !m.End.Equal(wantRes.End) {
		t.Errorf("window %s..%s, want the generator's %s..%s", m.Start, m.End, wantRes.Start, wantRes.End)
	}
	roles := map[metrics.Role]int{}
	for _, s := range m.Resources {
		roles[s.Component.Role]++
		if s.Component.Role == metrics.RoleLoad && s.Component.Node != "mb-load-1" {
			t.Errorf("load generator ran on %q, want the load node", s.Component.Node)
		}
	}
	wantRoles := map[metrics.Role]int{metrics.RoleApp: 12, metrics.RoleLoad: 1, metrics.RoleNodeProxy: 3,
		metrics.RoleCNI: 3, metrics.RoleControlPlane: 1}
	for role, n := range wantRoles {
		if roles[role] != n {
			t.Errorf("%d %s components measured, want %d (all: %v)", roles[role], role, n, roles)
		}
	}

	// One generator per namespace: ns-3's pod has no log to read, so
	// Measure must fail, naming it, and soon.
	start := time.Now()
	_, err = p.Measure(ctx, infra.LoadSpec{PerNamespace: true, Options: load.Options{Rate: 10, Duration: 2 * time.Second, Connections: 1}})
	if err == nil || !strings.Contains(err.Error(), "ns-3/") || !strings.Contains(err.Error(), "cannot be read from pod") {
		t.Errorf("Measure error = %v, want one saying ns-3's generator output cannot be read", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Measure took %s to fail, want it bounded well under its deadline", d)
	}

	if err := p.RemoveMesh(ctx); err != nil {
		t.Fatal(err)
	}
	if rels, _ := p.installedReleases(ctx, p.opts.RunID); len(rels) != 0 {
		t.Errorf("releases left after RemoveMesh: %v", rels)
	}
	for _, ns := range p.namespaces {
		n, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := n.Labels[labelDataplane]; ok {
			t.Errorf("namespace %s keeps %s after RemoveMesh", ns, labelDataplane)
		}
		if n.Labels[labelComponent] != componentWorkload {
			t.Errorf("namespace %s lost its workload label: %v", ns, n.Labels)
		}
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("clean-up left %d objects behind: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}

// TestIntegrationCancelRollsBack interrupts a mesh install and checks
// that nothing of it stays.
func TestIntegrationCancelRollsBack(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := newTestPlatform(t, c)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	ictx, icancel := context.WithCancel(ctx)
	go func() {
		// Interrupt once the first chart is in.
		for ictx.Err() == nil {
			if rels, _ := p.installedReleases(ictx, p.opts.RunID); len(rels) > 0 {
				icancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_, err := p.InstallMesh(ictx, mesh.MeshSpec{Profile: mesh.ProfileAmbient})
	icancel()
	if err == nil {
		t.Fatal("InstallMesh succeeded despite the interruption")
	}
	t.Logf("interrupted install: %v", err)
	if rels, err := p.installedReleases(ctx, p.opts.RunID); err != nil || len(rels) != 0 {
		t.Errorf("after an interrupted install: releases %v (err %v), want none", rels, err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, istioNamespace, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s left after an interrupted install", istioNamespace)
	}
}
