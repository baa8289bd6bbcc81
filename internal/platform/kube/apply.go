package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// resourceFor maps an object's kind to its REST resource, retrying once
// with fresh discovery, since a chart may just have added the CRD.
func (c *clients) resourceFor(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.resetDiscovery()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource).Namespace(namespace), nil
	}
	return c.dyn.Resource(m.Resource), nil
}

// apply creates or updates objects with server-side apply, in order. With
// dryRun the server validates and defaults them (admission included) but
// stores nothing.
func (c *clients) apply(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool) error {
	for _, o := range objs {
		ri, err := c.resourceFor(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return fmt.Errorf("apply %s: %w", describe(o), err)
		}
		data, err := json.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("apply %s: %w", describe(o), err)
		}
		opts := metav1.PatchOptions{FieldManager: fieldManager, Force: ptr(true)}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts); err != nil {
			return fmt.Errorf("apply %s: %w", describe(o), err)
		}
	}
	return nil
}

// remove deletes objects, ignoring those already gone, in reverse order.
func (c *clients) remove(ctx context.Context, objs []*unstructured.Unstructured) error {
	policy := metav1.DeletePropagationBackground
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		ri, err := c.resourceFor(o.GroupVersionKind(), o.GetNamespace())
		if meta.IsNoMatchError(err) {
			continue // its CRD is gone, and with it the object
		}
		if err != nil {
			return fmt.Errorf("delete %s: %w", describe(o), err)
		}
		err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", describe(o), err)
		}
	}
	return nil
}

// describe names an object for messages: "Deployment ns-1/tier-1-app-a".
func describe(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

func ptr[T any](v T) *T { return &v }
