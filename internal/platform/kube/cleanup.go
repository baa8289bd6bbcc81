package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// meshObjectKinds are the kinds of mesh objects meshbench applies itself.
var meshObjectKinds = []schema.GroupVersionKind{
	{Group: "security.istio.io", Version: "v1", Kind: "AuthorizationPolicy"},
	{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"},
	gatewayGVK,
	{Group: "networking.istio.io", Version: "v1", Kind: "Gateway"},
	{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
	ciliumPolicyGVK,
}

// removeMeshObjects deletes every mesh object meshbench applied, found by
// label in all namespaces; kinds whose CRD is absent are skipped.
func (p *kubePlatform) removeMeshObjects(ctx context.Context) error {
	sel := metav1.ListOptions{LabelSelector: selectorManaged + "," + labelComponent + "=" + componentMesh}
	for _, gvk := range meshObjectKinds {
		m, err := p.c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		ri := p.c.dyn.Resource(m.Resource)
		list, err := ri.List(ctx, sel)
		if apierrors.IsNotFound(err) {
			// The kind went with its CRD since discovery was cached
			// (a CNI's CRDs, say): none of its objects are left.
			p.c.resetDiscovery()
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for _, o := range list.Items {
			err := ri.Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s: %w", describe(&o), err)
			}
		}
	}
	return nil
}

// deleteNamespaces deletes the namespaces matching selector and waits
// until they are gone, so that the next install does not meet a
// terminating namespace.
func (p *kubePlatform) deleteNamespaces(ctx context.Context, selector string) error {
	nss := p.c.kube.CoreV1().Namespaces()
	list, err := nss.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list namespaces: %w", err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	for _, ns := range list.Items {
		if ns.Status.Phase == corev1.NamespaceTerminating {
			continue
		}
		p.log.Info("deleting namespace", "namespace", ns.Name)
		if err := nss.Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", ns.Name, err)
		}
	}
	var left []string
	err = wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		list, err := nss.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, pollErr(ctx, err)
		}
		left = left[:0]
		for _, ns := range list.Items {
			left = append(left, ns.Name)
		}
		return len(left) == 0, nil
	})
	if err != nil {
		sort.Strings(left)
		return fmt.Errorf("namespaces %s still terminating: %w", strings.Join(left, ", "), err)
	}
	return nil
}

// deleteManagedNamespaces deletes every namespace meshbench made.
func (p *kubePlatform) deleteManagedNamespaces(ctx context.Context) error {
	return p.deleteNamespaces(ctx, selectorManaged)
}

// Down removes everything meshbench made in the cluster, found by its
// labels: the mesh (charts, objects, labels), load and probe Jobs, and
// every namespace it created. The nodes are left as they were.
func (p *kubePlatform) Down(ctx context.Context) error {
	// The workload goes with its namespaces: no need to restart it bare.
	p.workload, p.namespaces = nil, nil
	if err := p.RemoveMesh(ctx); err != nil {
		return err
	}
	if err := p.deleteManagedNamespaces(ctx); err != nil {
		return fmt.Errorf("kubernetes: down: %w", err)
	}
	return nil
}
