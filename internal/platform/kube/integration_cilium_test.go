package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// fakeCilium makes the test cluster look like one whose network plugin is
// Cilium with WireGuard and SPIRE mutual authentication: the agent and
// SPIRE agent DaemonSets (kwok runs their pods on every node), the
// cilium-config settings, and the CRDs meshbench uses. It returns the
// objects, for the test to delete.
func fakeCilium(t *testing.T, ctx context.Context, p *kubePlatform) []*unstructured.Unstructured {
	t.Helper()
	crd := func(plural, kind string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + ".cilium.io"},
			"spec": map[string]any{
				"group": "cilium.io", "scope": "Namespaced",
				"names": map[string]any{"plural": plural, "kind": kind},
				"versions": []any{map[string]any{"name": "v2", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}}
	}
	agent := func(ns, name string, labels map[string]string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
						Containers:  []corev1.Container{{Name: name, Image: "quay.io/cilium/" + name + ":test"}},
					},
				},
			},
		}
	}
	typed, err := toUnstructured([]runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: spireNamespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ciliumNamespace, Name: ciliumConfig},
			Data: map[string]string{"enable-wireguard": "true", "mesh-auth-enabled": "true", "mesh-auth-mutual-enabled": "true"}},
		agent(ciliumNamespace, ciliumAgent, map[string]string{"k8s-app": "cilium"}),
		agent(spireNamespace, "spire-agent", map[string]string{"app": "spire-agent"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := append([]*unstructured.Unstructured{crd("ciliumnetworkpolicies", "CiliumNetworkPolicy"), crd("ciliumendpoints", "CiliumEndpoint")}, typed...)
	if err := p.c.apply(ctx, objs, false); err != nil {
		t.Fatal(err)
	}
	p.c.resetDiscovery()
	if err := p.waitRollouts(ctx, []string{ciliumNamespace, spireNamespace}, "k8s-app=cilium"); err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestIntegrationCiliumClusterDataPlane runs the cilium profile against a
// cluster that runs (a simulated) Cilium: Up accepts it, InstallMesh only
// applies the mutual-authentication policies and verifies (the agents and
// the settings pass; the endpoints and WireGuard keys, which only a real
// agent makes, fail), and removing the mesh and tearing down leave
// Cilium exactly as it was: no code path uninstalls it.
func TestIntegrationCiliumClusterDataPlane(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := newTestPlatformWith(t, c, func(o *Options) {
		o.Meshes = []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}, {Profile: mesh.ProfileCilium}}
	})
	c.dumpOnFailure(t, "ns-1", ciliumNamespace, spireNamespace)
	cilium := fakeCilium(t, ctx, p)
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.c.remove(dctx, cilium); err != nil {
			t.Errorf("removing the simulated Cilium: %v", err)
		}
		// Until its CRDs are gone from discovery, the next test's
		// snapshot would list a kind whose storage is going away.
		err := wait.PollUntilContextTimeout(dctx, pollInterval, time.Minute, true, func(context.Context) (bool, error) {
			_, err := c.Client.Discovery().ServerResourcesForGroupVersion("cilium.io/v2")
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the simulated Cilium's CRDs are still served: %v", err)
		}
	})
	before := snapshot(t, ctx, c.Kubeconfig)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatalf("Up refused a cluster that runs Cilium as the profile needs: %v", err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	checks, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileCilium})
	if err == nil {
		t.Fatal("InstallMesh passed, but no Cilium agent made endpoints or WireGuard keys")
	}
	assertChecks(t, checks, map[string]bool{
		"pods-ready": true, "cilium-on-app-nodes": true, "spire-agent-on-app-nodes": true, "mutual-auth-enabled": true,
		"cilium-endpoints": false, "wireguard": false,
		"meshed-call-succeeds": true, checkPolicyDropsOutsiders: false, checkInstalled: true,
	})
	// Cilium's outsider probe runs in the unmeshed namespace, where kwok
	// serves no generator log: a probe that cannot report fails, saying why.
	if ch := findCheck(checks, checkPolicyDropsOutsiders); !strings.Contains(ch.Detail, "could not run") || !strings.Contains(ch.Detail, "log") ||
		!strings.Contains(ch.Detail, "from namespace ns-1, not a neighbour") {
		t.Errorf("plaintext probe detail %q does not say its output could not be read, judged beside a control elsewhere", ch.Detail)
	}
	if rels := mustReleases(t, ctx, p); len(rels) != 0 {
		t.Errorf("the cilium profile installed releases %s; Cilium is the cluster's, never meshbench's", releaseNames(rels))
	}
	pol, err := p.c.resourceFor(ciliumPolicyGVK, "ns-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pol.Get(ctx, "meshbench-mutual-auth", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("mutual-auth policy: %v", err)
	}
	rules, _, _ := unstructured.NestedSlice(got.Object, "spec", "ingress")
	if len(rules) != 1 || rules[0].(map[string]any)["authentication"].(map[string]any)["mode"] != "required" {
		t.Errorf("policy ingress %v, want mutual authentication required", rules)
	}

	if err := p.RemoveMesh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := c.Client.AppsV1().DaemonSets(ciliumNamespace).Get(ctx, ciliumAgent, metav1.GetOptions{})
	if err != nil || ds.DeletionTimestamp != nil {
		t.Fatalf("the Cilium agent after RemoveMesh and Down: %v, %+v; want it untouched", err, ds.ObjectMeta)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, spireNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("SPIRE's namespace after Down: %v", err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("clean-up left %d objects behind: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}
