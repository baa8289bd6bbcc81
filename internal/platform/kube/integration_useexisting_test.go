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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// TestIntegrationUseExistingMesh puts a stand-in for a user's Istio in
// the cluster (its PeerAuthentication CRD, an istiod Deployment, and the
// mesh-wide policy PERMISSIVE): a run without use_existing refuses it,
// naming the option; a run with it, as a user bound only to the namespaced
// role `meshbench kubernetes rbac` prints for the study, installs no chart,
// applies its STRICT policy in its own namespace only, refuses a policy of
// the mesh's that would weaken it for meshbench's pods, runs the checks,
// records the mesh as found, and leaves the user's mesh exactly as it was
// after RemoveMesh and Down. As that user, every escalation the audit
// named is refused by the API server.
func TestIntegrationUseExistingMesh(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	existing := mesh.MeshSpec{Profile: mesh.ProfileSidecar, UseExisting: true}
	withMesh := func(m mesh.MeshSpec) func(*Options) {
		return func(o *Options) { o.Meshes = []mesh.MeshSpec{m} }
	}

	// use_existing on a cluster without Istio is refused before anything.
	none := newTestPlatformWith(t, c, withMesh(existing))
	if err := none.Up(ctx, testClusterSpec); err == nil || !strings.Contains(err.Error(), "runs no istio") {
		t.Fatalf("Up with use_existing and no Istio: %v, want a refusal", err)
	}

	dyn := none.c.dyn.Resource(crdGVR)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "peerauthentications.security.istio.io"},
		"spec": map[string]any{
			"group": "security.istio.io", "scope": "Namespaced",
			"names": map[string]any{"plural": "peerauthentications", "singular": "peerauthentication", "kind": "PeerAuthentication", "listKind": "PeerAuthenticationList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	paGVR := schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}
	pas := c.dynamic(t).Resource(paGVR)
	nss := c.Client.CoreV1().Namespaces()
	t.Cleanup(func() {
		ctx := context.Background()
		_ = dyn.Delete(ctx, crd.GetName(), metav1.DeleteOptions{})
		_ = nss.Delete(ctx, istioNamespace, metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := nss.Get(ctx, istioNamespace, metav1.GetOptions{})
			_, cerr := dyn.Get(ctx, crd.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err) && apierrors.IsNotFound(cerr), nil
		})
	})
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: istioNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const istiodImage = "docker.io/istio/pilot:1.99.0-users"
	labels := map[string]string{"app": "istiod"}
	istiod := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "istiod", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "discovery", Image: istiodImage}}}},
		},
	}
	// The mesh's own policy: mesh-wide PERMISSIVE, as many clusters run
	// while they migrate to mTLS.
	var meshWide *unstructured.Unstructured
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		meshWide, err = pas.Namespace(istioNamespace).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
			"metadata": map[string]any{"name": "default", "namespace": istioNamespace},
			"spec":     map[string]any{"mtls": map[string]any{"mode": "PERMISSIVE"}},
		}}, metav1.CreateOptions{})
		return err == nil, nil // until the CRD is served
	}); err != nil {
		t.Fatalf("the user's mesh-wide PeerAuthentication: %v", err)
	}
	deps := c.Client.AppsV1().Deployments(istioNamespace)
	if _, err := deps.Create(ctx, istiod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The user's istiod's pod, so that the record can name its image.
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(istioNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=istiod"})
		return err == nil && len(pods.Items) > 0, nil
	}); err != nil {
		t.Fatalf("the stand-in istiod has no pod: %v", err)
	}
	survives := func(when string) {
		t.Helper()
		got, err := dyn.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil || got.GetDeletionTimestamp() != nil || got.GetLabels()[labelRun] != "" {
			t.Fatalf("%s: the user's Istio CRD: %v (deleting %v, labels %v)", when, err, got != nil && got.GetDeletionTimestamp() != nil, got.GetLabels())
		}
		d, err := deps.Get(ctx, "istiod", metav1.GetOptions{})
		if err != nil || d.DeletionTimestamp != nil || d.Spec.Template.Spec.Containers[0].Image != istiodImage {
			t.Fatalf("%s: the user's istiod: %v", when, err)
		}
		ns, err := nss.Get(ctx, istioNamespace, metav1.GetOptions{})
		if err != nil || ns.DeletionTimestamp != nil || ns.Labels[labelRun] != "" {
			t.Fatalf("%s: the user's %s: %v", when, istioNamespace, err)
		}
		pa, err := pas.Namespace(istioNamespace).Get(ctx, "default", metav1.GetOptions{})
		if err != nil || pa.GetResourceVersion() != meshWide.GetResourceVersion() || pa.GetDeletionTimestamp() != nil {
			mode := ""
			if pa != nil {
				mode, _, _ = unstructured.NestedString(pa.Object, "spec", "mtls", "mode")
			}
			t.Fatalf("%s: the user's mesh-wide PeerAuthentication: %v, mode %q, labels %v: want it unchanged (PERMISSIVE)", when, err, mode, pa.GetLabels())
		}
	}

	// Without use_existing: refused, naming the option, nothing touched.
	own := newTestPlatformWith(t, c, withMesh(mesh.MeshSpec{Profile: mesh.ProfileSidecar}))
	err := own.Up(ctx, testClusterSpec)
	if err == nil || !strings.Contains(err.Error(), "which meshbench did not install (CRD peerauthentications.security.istio.io)") || !strings.Contains(err.Error(), "use_existing: true") {
		t.Fatalf("Up over a user's Istio: %v, want a refusal naming the CRD and use_existing", err)
	}
	if err := own.Down(ctx); err != nil {
		t.Fatal(err)
	}
	survives("after the refused run")

	// With use_existing, as a user bound to the role printed for it: no
	// chart, the checks run, the mesh recorded as found.
	role, err := RBAC(ctx, Options{Meshes: []mesh.MeshSpec{existing}}, DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	bindPrinted(t, ctx, c, role, smallUser)
	p := newTestPlatformWith(t, c, func(o *Options) { o.Meshes, o.Context = []mesh.MeshSpec{existing}, smallContext })
	for _, f := range p.permissionFindings(ctx, DefaultKubeVersion) {
		if !f.OK {
			t.Fatalf("doctor's permissions as the namespaced role: %s", f.Detail)
		}
	}
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	graph := testGraph(t, "tiered")
	if err := p.Deploy(ctx, platform.Workload{Graph: graph, Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	escalations(t, ctx, c, smallContext, "ns-1")

	// A policy of the mesh's own that selects meshbench's entry service
	// and turns mTLS off overrides any namespace's: refused, with the fix,
	// before meshbench applies anything.
	legacy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
		"metadata": map[string]any{"name": "users-legacy", "namespace": istioNamespace},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": graph.Entry}},
			"mtls": map[string]any{"mode": "DISABLE"}},
	}}
	if _, err := pas.Namespace(istioNamespace).Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = p.InstallMesh(ctx, existing)
	if err == nil || !strings.Contains(err.Error(), istioNamespace+"/users-legacy") || !strings.Contains(err.Error(), "DISABLE") {
		t.Errorf("InstallMesh under a root-namespace policy disabling mTLS for %s: %v, want a refusal naming it", graph.Entry, err)
	}
	if list, err := pas.Namespace("ns-1").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("PeerAuthentications in ns-1 after the refusal: %d (%v), want none", len(list.Items), err)
	}
	if err := pas.Namespace(istioNamespace).Delete(ctx, legacy.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	checks, err := p.InstallMesh(ctx, existing)
	if err == nil {
		t.Fatal("InstallMesh passed, but the stand-in istiod injects no sidecar")
	}
	if findCheck(checks, mesh.CheckPlaintextRefused).Detail == "check not made" {
		t.Errorf("checks %+v: verification did not run", checks)
	}
	rec := findCheck(checks, checkInstalled)
	if rec.Facts[factExisting] != "istio" || !strings.Contains(rec.Facts[factExisting+"/images"], istiodImage) || !strings.Contains(rec.Detail, "existing istio") {
		t.Errorf("installed record %q, facts %v: want the existing istio and its image %s", rec.Detail, rec.Facts, istiodImage)
	}
	if rels, err := p.installedReleases(ctx, p.opts.RunID); err != nil || len(rels) != 0 {
		t.Errorf("releases installed with use_existing: %v (%v), want none", releaseNames(rels), err)
	}
	survives("after InstallMesh")
	// meshbench's STRICT, in its own namespace.
	mine, err := pas.Namespace("ns-1").List(ctx, metav1.ListOptions{LabelSelector: runSelector(p.opts.RunID)})
	if err != nil || len(mine.Items) != 1 {
		t.Fatalf("meshbench's PeerAuthentications in ns-1: %v (%v), want one", mine, err)
	}
	if mode, _, _ := unstructured.NestedString(mine.Items[0].Object, "spec", "mtls", "mode"); mode != "STRICT" || mine.Items[0].Object["spec"].(map[string]any)["selector"] != nil {
		t.Errorf("meshbench's policy in ns-1: %v, want namespace-wide STRICT", mine.Items[0].Object["spec"])
	}
	if err := p.RemoveMesh(ctx); err != nil {
		t.Fatal(err)
	}
	survives("after RemoveMesh")
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	survives("after Down")

	// Without its admission policy the role could bind itself anywhere:
	// doctor refuses it.
	adm := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	if err := adm.Delete(ctx, policyName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fs := p.permissionFindings(ctx, DefaultKubeVersion)
	if len(fs) != 1 || fs[0].OK || !strings.Contains(fs[0].Detail, "admission policy binding "+policyName) {
		t.Errorf("doctor's permissions without the admission policy's binding: %+v, want it named", fs)
	}
}
