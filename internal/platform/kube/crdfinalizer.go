package kube

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

const (
	// annotRequeue on a terminating CRD re-queues it in the API server's
	// CRD finalizer.
	annotRequeue = "meshbench.io/requeue"
	// requeueEvery spaces the re-queues of one CRD.
	requeueEvery = 5 * time.Second
)

// crdRequeuer re-queues CRDs whose instance clean-up failed. The API
// server's CRD finalizer (Kubernetes 1.34) fails on a CRD deleted while
// its storage is still initializing, which a CRD deleted seconds after
// it was made (a Ctrl-C during install) meets on a loaded machine. It
// retries at once, but that retry meets a conflict on its own status
// update and gives up, and updates that only change the Terminating
// condition do not re-queue: the CRD stays until the informer resync,
// minutes later. Any other change re-queues it.
type crdRequeuer struct {
	ri   dynamic.NamespaceableResourceInterface
	log  *slog.Logger
	last map[string]time.Time
}

// requeueFailed annotates each CRD whose Terminating condition says its
// instance clean-up failed, at most once every requeueEvery.
func (r *crdRequeuer) requeueFailed(ctx context.Context, crds []unstructured.Unstructured) error {
	now := time.Now()
	for i := range crds {
		name := crds[i].GetName()
		if !cleanupFailed(&crds[i]) || now.Sub(r.last[name]) < requeueEvery {
			continue
		}
		r.last[name] = now
		r.log.Info("re-queueing a CRD whose clean-up the API server left", "crd", name)
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, annotRequeue, now.UTC().Format(time.RFC3339Nano))
		if _, err := r.ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("requeue CRD %s: %w", name, err)
		}
	}
	return nil
}

// cleanupFailed says whether a CRD's Terminating condition reports that
// deleting its instances failed.
func cleanupFailed(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Terminating" && m["status"] == "True" && m["reason"] == "InstanceDeletionFailed" {
			return true
		}
	}
	return false
}
