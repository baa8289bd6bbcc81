package kube

import (
	"context"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testCRD(name, reason string) *unstructured.Unstructured {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name},
	}}
	if reason != "" {
		_ = unstructured.SetNestedSlice(crd.Object, []any{
			map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
			map[string]any{"type": "Terminating", "status": "True", "reason": reason},
		}, "status", "conditions")
	}
	return crd
}

func TestCRDRequeuer(t *testing.T) {
	stuck := testCRD("envoyfilters.networking.istio.io", "InstanceDeletionFailed")
	busy := testCRD("gateways.networking.istio.io", "InstanceDeletionInProgress")
	plain := testCRD("sidecars.networking.istio.io", "")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"}, stuck, busy, plain)
	rq := &crdRequeuer{ri: dyn.Resource(crdGVR), log: slog.New(slog.DiscardHandler), last: map[string]time.Time{}}
	items := []unstructured.Unstructured{*stuck, *busy, *plain}
	ctx := context.Background()
	for range 2 { // the second pass comes within requeueEvery
		if err := rq.requeueFailed(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	patched := patchedNames(dyn.Actions())
	if len(patched) != 1 || patched[0] != stuck.GetName() {
		t.Fatalf("patched %v, want only %s, once", patched, stuck.GetName())
	}
	got, err := dyn.Resource(crdGVR).Get(ctx, stuck.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAnnotations()[annotRequeue] == "" {
		t.Errorf("stuck CRD not annotated: %v", got.GetAnnotations())
	}
	// Once requeueEvery has passed, a CRD still stuck is re-queued again.
	rq.last[stuck.GetName()] = time.Now().Add(-requeueEvery)
	if err := rq.requeueFailed(ctx, items); err != nil {
		t.Fatal(err)
	}
	if n := len(patchedNames(dyn.Actions())); n != 2 {
		t.Errorf("%d patches in all, want a second one after requeueEvery", n)
	}
}

func patchedNames(actions []k8stesting.Action) []string {
	var names []string
	for _, a := range actions {
		if p, ok := a.(k8stesting.PatchAction); ok {
			names = append(names, p.GetName())
		}
	}
	return names
}
