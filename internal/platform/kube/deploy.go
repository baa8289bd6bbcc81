package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
)

// selectorApps selects the workload's own pods and Deployments.
const selectorApps = selectorManaged + "," + labelComponent + "=" + componentApp

// manifests returns the workload's objects for this cluster's placement.
func (p *kubePlatform) manifests(w platform.Workload) ([]*unstructured.Unstructured, error) {
	return workloadManifests(w, manifestParams{
		Prefix: p.opts.NamespacePrefix, Image: p.opts.Image, PullPolicy: corev1.PullPolicy(p.opts.ImagePullPolicy), Place: p.place(infra.NodeApp),
	})
}

// Deploy applies the workload, removes what an earlier workload had and
// this one does not, and waits for every Deployment to roll out, while
// the run holds the cluster.
func (p *kubePlatform) Deploy(ctx context.Context, w platform.Workload) error {
	if err := p.lostLease(); err != nil {
		return leaseErr(context.Background(), err)
	}
	ctx, done := p.held(ctx)
	defer done()
	return leaseErr(ctx, p.deploy(ctx, w))
}

func (p *kubePlatform) deploy(ctx context.Context, w platform.Workload) error {
	if p.places == nil {
		return fmt.Errorf("kubernetes: deploy before up: the node roles are not known yet")
	}
	objs, err := p.manifests(w)
	if err != nil {
		return fmt.Errorf("kubernetes: workload: %w", err)
	}
	namespaces := workloadNamespaces(p.opts.NamespacePrefix, w.Namespaces)
	p.log.Info("deploying workload", "graph", w.Graph.Name, "namespaces", len(namespaces), "objects", len(objs))
	if err := p.apply(ctx, objs); err != nil {
		return fmt.Errorf("kubernetes: deploy: %w", p.rollbackOnCancel(ctx, err))
	}
	p.workload, p.namespaces = &w, namespaces
	if err := p.prune(ctx, objs); err != nil {
		return fmt.Errorf("kubernetes: deploy: %w", err)
	}
	if err := p.waitRollouts(ctx, namespaces, selectorApps); err != nil {
		return fmt.Errorf("kubernetes: deploy: %w", p.rollbackOnCancel(ctx, err))
	}
	return nil
}

// rollbackOnCancel removes the workload when the context ended mid-way,
// with a fresh deadline, so that Ctrl-C leaves no half-made workload.
func (p *kubePlatform) rollbackOnCancel(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	p.workload, p.namespaces = nil, nil
	if rerr := p.deleteNamespaces(rctx, p.selector(componentWorkload)); rerr != nil {
		return fmt.Errorf("%w (and rolling back: %v)", err, rerr)
	}
	return err
}

// prune deletes meshbench's workload objects that the new workload no
// longer has: namespaces beyond its count, and Deployments, Services and
// ServiceAccounts of another graph.
func (p *kubePlatform) prune(ctx context.Context, keep []*unstructured.Unstructured) error {
	want := sets.New[string]()
	for _, o := range keep {
		want.Insert(o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName())
	}
	sel := metav1.ListOptions{LabelSelector: p.selector(componentWorkload)}
	nss, err := p.c.kube.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("list namespaces: %w", err)
	}
	var stale []*unstructured.Unstructured
	for _, ns := range nss.Items {
		if !want.Has("Namespace//" + ns.Name) {
			stale = append(stale, object("v1", "Namespace", "", ns.Name))
			continue
		}
		managed := metav1.ListOptions{LabelSelector: runSelector(p.opts.RunID)}
		deps, err := p.c.kube.AppsV1().Deployments(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
		if err != nil {
			return fmt.Errorf("list deployments: %w", err)
		}
		for _, d := range deps.Items {
			if !want.Has("Deployment/" + ns.Name + "/" + d.Name) {
				stale = append(stale, object("apps/v1", "Deployment", ns.Name, d.Name))
			}
		}
		svcs, err := p.c.kube.CoreV1().Services(ns.Name).List(ctx, managed)
		if err != nil {
			return fmt.Errorf("list services: %w", err)
		}
		for _, s := range svcs.Items {
			if !want.Has("Service/" + ns.Name + "/" + s.Name) {
				stale = append(stale, object("v1", "Service", ns.Name, s.Name))
			}
		}
		sas, err := p.c.kube.CoreV1().ServiceAccounts(ns.Name).List(ctx, managed)
		if err != nil {
			return fmt.Errorf("list service accounts: %w", err)
		}
		for _, s := range sas.Items {
			if !want.Has("ServiceAccount/" + ns.Name + "/" + s.Name) {
				stale = append(stale, object("v1", "ServiceAccount", ns.Name, s.Name))
			}
		}
	}
	return p.c.remove(ctx, stale)
}

// object is a reference to an object, enough to delete it.
func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
