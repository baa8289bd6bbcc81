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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// meshObjectKinds are the kinds of mesh objects meshbench applies itself.
var meshObjectKinds = []schema.GroupVersionKind{
	{Group: "security.istio.io", Version: "v1", Kind: "AuthorizationPolicy"},
	peerAuthGVK,
	gatewayGVK,
	{Group: "networking.istio.io", Version: "v1", Kind: "Gateway"},
	{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
	ciliumPolicyGVK,
}

// removeMeshObjects deletes the mesh objects a run applied ("" every
// run), found by label in all namespaces; kinds whose CRD is absent are
// skipped.
func (p *kubePlatform) removeMeshObjects(ctx context.Context, run string) error {
	objs, err := p.meshObjects(ctx, run)
	if err != nil {
		return err
	}
	return p.c.remove(ctx, objs)
}

// meshObjects lists the mesh objects a run applied ("" every run).
func (p *kubePlatform) meshObjects(ctx context.Context, run string) ([]*unstructured.Unstructured, error) {
	sel := metav1.ListOptions{LabelSelector: runSelector(run) + "," + labelComponent + "=" + componentMesh}
	var out []*unstructured.Unstructured
	for _, gvk := range meshObjectKinds {
		m, err := p.c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		list, err := p.c.dyn.Resource(m.Resource).List(ctx, sel)
		if apierrors.IsNotFound(err) {
			// The kind went with its CRD since discovery was cached
			// (a CNI's CRDs, say): none of its objects are left.
			p.c.resetDiscovery()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
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

// Down removes everything this run made in the cluster, found by its
// labels: the mesh (charts, objects, labels), load and probe Jobs, and
// every namespace it created; then it releases the cluster. The nodes are
// left as they were.
func (p *kubePlatform) Down(ctx context.Context) error {
	// The workload goes with its namespaces: no need to restart it bare.
	p.workload, p.namespaces, p.mesh = nil, nil, nil
	if err := p.removeRun(ctx, p.opts.RunID); err != nil {
		return fmt.Errorf("kubernetes: down: %w", err)
	}
	if err := p.release(ctx); err != nil {
		return fmt.Errorf("kubernetes: down: release the cluster: %w", err)
	}
	return nil
}

// removeRun removes what one run made ("" every run), found by label:
// mesh objects, Helm releases in reverse order with the CRDs they kept,
// then its namespaces and everything in them.
func (p *kubePlatform) removeRun(ctx context.Context, run string) error {
	if err := p.removeMeshObjects(ctx, run); err != nil {
		return err
	}
	if err := p.removeReleases(ctx, run); err != nil {
		return err
	}
	p.c.resetDiscovery()
	return p.deleteNamespaces(ctx, runSelector(run))
}

// Item is one thing a meshbench run made, as `kubernetes down` lists it.
type Item struct {
	Run  string `json:"run"`
	What string `json:"what"` // "namespace ns-1", "helm release istio-system/istiod"
}

// inventory lists what a run made ("" every run): its namespaces, Helm
// releases, mesh objects outside them and the CRDs its charts kept.
// Everything else it made lives in those namespaces or goes with its
// releases.
func (p *kubePlatform) inventory(ctx context.Context, run string) ([]Item, error) {
	var out []Item
	nss, err := p.c.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: runSelector(run)})
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	for _, ns := range nss.Items {
		out = append(out, Item{Run: ns.Labels[labelRun], What: "namespace " + ns.Name})
	}
	rels, err := p.installedReleases(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		out = append(out, Item{Run: r.Run, What: "helm release " + r.Namespace + "/" + r.Name})
	}
	objs, err := p.meshObjects(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		out = append(out, Item{Run: o.GetLabels()[labelRun], What: describe(o)})
	}
	crds, err := p.c.dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{LabelSelector: crdSelector(run, "")})
	if err != nil {
		return nil, fmt.Errorf("list CRDs: %w", err)
	}
	for _, c := range crds.Items {
		out = append(out, Item{Run: c.GetLabels()[labelRun], What: "CRD " + c.GetName()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// Inventory lists what a meshbench run made in the cluster the options
// name ("" lists every run's), for `meshbench kubernetes down --dry-run`.
func Inventory(ctx context.Context, opts Options, run string) ([]Item, error) {
	p, err := openAdmin(opts, run)
	if err != nil {
		return nil, err
	}
	items, err := p.inventory(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return items, nil
}

// Teardown removes what a meshbench run made in the cluster the options
// name, after a crash too; run "" removes what every run made. It holds
// the cluster's lease while it works, so that no run starts meanwhile,
// and gives it up as a run does (release): the lease's namespace goes when
// no run's record is left in it. A live run's objects are refused: stop
// that run first.
func Teardown(ctx context.Context, opts Options, run string) error {
	p, err := openAdmin(opts, run)
	if err != nil {
		return err
	}
	holder, err := p.liveHolder(ctx)
	if err != nil {
		return fmt.Errorf("kubernetes: down: %w", err)
	}
	if holder != "" && (run == "" || strings.HasPrefix(holder, run+" ")) {
		return fmt.Errorf("kubernetes: run %s is still running (it renews the cluster's lease %s/%s): stop it first, or wait %s after it was killed", holder, lockNamespace, lockName, leaseDuration)
	}
	what := "--all"
	if run != "" {
		what = run
	}
	if err := p.acquire(ctx, holderOf("kubernetes down "+what)); err != nil {
		return fmt.Errorf("kubernetes: down: %w", err)
	}
	err = p.removeRun(ctx, run)
	if rerr := p.release(ctx); rerr != nil && err == nil {
		err = fmt.Errorf("release the cluster: %w", rerr)
	}
	if err != nil {
		return fmt.Errorf("kubernetes: down: %w", err)
	}
	return nil
}

// openAdmin opens a cluster to list or remove what runs made, which needs
// no image.
func openAdmin(opts Options, run string) (*kubePlatform, error) {
	if run != "" {
		if err := checkRunID(run); err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
	}
	if opts.Image == "" {
		opts.Image = "unused"
	}
	return newPlatform(opts)
}

// liveHolder is the holder of the cluster's Lease while it is renewed,
// or "".
func (p *kubePlatform) liveHolder(ctx context.Context) (string, error) {
	if there, err := p.lockNamespaceExists(ctx); err != nil || !there {
		return "", err
	}
	l, err := p.c.kube.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the cluster's lease %s/%s: %w", lockNamespace, lockName, err)
	}
	live, err := p.leaseLive(ctx, l)
	if apierrors.IsForbidden(err) && isTerminating(err) {
		return "", nil // the holder released it: its namespace is going
	}
	if err != nil || !live {
		return "", err
	}
	return deref(l.Spec.HolderIdentity), nil
}
