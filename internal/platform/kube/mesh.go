package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// meshFieldManager owns the mesh's labels and annotations on workload
	// namespaces, apart from the workload's own, so that applying an
	// empty set under it removes exactly those.
	meshFieldManager = "meshbench-mesh"
	// annotDataplane on the workload's pod templates names the data plane
	// that must be in each pod from its creation (a sidecar, or Cilium's
	// endpoint); changing it re-creates the pods, to join or leave.
	annotDataplane = "meshbench.io/dataplane"
	// rollbackTimeout bounds clean-up after a failure or Ctrl-C.
	rollbackTimeout = 5 * time.Minute
)

// installedMesh is the mesh InstallMesh installed.
type installedMesh struct {
	Plan     meshPlan
	Versions map[string]string // release -> chart version
	Charts   []installedChart  // in install order
}

// InstallMesh installs a mesh profile on the deployed workload, then
// verifies it. An install error rolls back what was installed; a failed
// check leaves the mesh installed (for inspection; RemoveMesh or Down
// remove it) and is returned in the checks and as an error. It stops,
// saying why, when the run loses the cluster's lease.
func (p *kubePlatform) InstallMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	if err := p.lostLease(); err != nil {
		return nil, leaseErr(context.Background(), err)
	}
	ctx, done := p.held(ctx)
	defer done()
	checks, err := p.installMesh(ctx, m)
	return checks, leaseErr(ctx, err)
}

func (p *kubePlatform) installMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	if p.workload == nil {
		return nil, errors.New("kubernetes: install mesh before deploy: there is no workload to mesh")
	}
	pl, err := p.plan(m)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	// The mesh of this run's previous cell would clash.
	if err := p.RemoveMesh(ctx); err != nil {
		return nil, err
	}
	if m.UseExisting && pl.Profile.Mesh == mesh.Istio {
		if err := p.refuseWeakerPeerAuth(ctx); err != nil {
			return nil, fmt.Errorf("kubernetes: %s with use_existing: %w", m.Profile, err)
		}
	}
	if err := p.install(ctx, pl); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if rerr := p.RemoveMesh(rctx); rerr != nil {
			err = fmt.Errorf("%w (and rolling back: %v)", err, rerr)
		}
		return nil, fmt.Errorf("kubernetes: install %s: %w", m.Profile, err)
	}
	checks, err := p.verify(ctx, pl)
	if err != nil {
		return checks, fmt.Errorf("kubernetes: verify %s: %w", m.Profile, err)
	}
	prov, err := p.installedCheck(ctx)
	if err != nil {
		return checks, fmt.Errorf("kubernetes: %s: record what was installed: %w", m.Profile, err)
	}
	checks = append(checks, prov)
	if failed := mesh.FailedChecks(checks); failed != "" {
		return checks, fmt.Errorf("kubernetes: %s is not in force: %s", m.Profile, failed)
	}
	return checks, nil
}

func (p *kubePlatform) install(ctx context.Context, pl meshPlan) error {
	p.mesh = &installedMesh{Plan: pl, Versions: map[string]string{}}
	for _, ns := range pl.Namespaces {
		labels := maps.Clone(pl.SystemLabels[ns])
		if labels == nil {
			labels = map[string]string{}
		}
		labels[labelPSS] = systemPodSecurity(pl, ns)
		if err := p.ensureNamespace(ctx, ns, labels); err != nil {
			return err
		}
	}
	if pl.Profile.Waypoint {
		if err := p.requireGatewayAPI(ctx); err != nil {
			return err
		}
	}
	for i, r := range pl.Releases {
		ic, err := p.installRelease(ctx, r, i+1)
		if err != nil {
			return err
		}
		p.mesh.Versions[r.Name] = ic.Version
		p.mesh.Charts = append(p.mesh.Charts, ic)
	}
	p.c.resetDiscovery() // the charts brought CRDs
	nsLabels := maps.Clone(pl.NSLabels)
	if nsLabels == nil {
		nsLabels = map[string]string{}
	}
	nsLabels[labelPSS] = podSecurityLevel(pl.Profile)
	if err := p.labelNamespaces(ctx, nsLabels, pl.NSAnnotations); err != nil {
		return err
	}
	if err := p.apply(ctx, pl.Objects); err != nil {
		return err
	}
	if err := p.restartWorkload(ctx, podDataplane(pl.Profile)); err != nil {
		return err
	}
	if pl.Ingress && pl.Profile.Family().IngressChart == "" {
		// The plain gateway is applied, not a chart: wait for it here.
		if err := p.waitRollouts(ctx, []string{plainIngressNamespace}, p.selector(componentIngress)); err != nil {
			return fmt.Errorf("ingress gateway: %w", err)
		}
	}
	if pl.Profile.Waypoint {
		return p.waitWaypoints(ctx, pl.Spec.WaypointReplicas)
	}
	return nil
}

// ensureNamespace creates a mesh's system namespace, labelled as
// meshbench's so that removal deletes it, unless it exists already: a
// namespace meshbench did not make it never deletes.
func (p *kubePlatform) ensureNamespace(ctx context.Context, name string, labels map[string]string) error {
	_, err := p.c.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	ns := object("v1", "Namespace", "", name)
	l := managedLabels(labels)
	l[labelComponent] = componentMesh
	ns.SetLabels(l)
	return p.apply(ctx, []*unstructured.Unstructured{ns})
}

// labelNamespaces sets the mesh's labels and annotations on every
// workload namespace under the mesh's own field manager; empty maps
// remove what it set before.
func (p *kubePlatform) labelNamespaces(ctx context.Context, labels, annotations map[string]string) error {
	for _, ns := range p.namespaces {
		obj := map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns, "labels": labels, "annotations": annotations},
		}
		data, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
		if err != nil {
			return err
		}
		_, err = p.c.kube.CoreV1().Namespaces().Patch(ctx, ns, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: meshFieldManager, Force: ptr(true)})
		if err != nil {
			return fmt.Errorf("label namespace %s: %w", ns, err)
		}
	}
	return nil
}

// podDataplane is what a profile needs in pods from their creation: the
// sidecar's name, the CNI's mesh, or nothing (ambient enrolls running
// pods).
func podDataplane(pr profile) string {
	switch pr.Plane {
	case mesh.PlaneSidecar:
		return pr.Proxy
	case mesh.PlaneCNI:
		return pr.Mesh
	}
	return ""
}

// restartWorkload re-creates the workload's pods when the data plane they
// were created under differs, so that sidecars are injected or dropped,
// and waits for the rollout.
func (p *kubePlatform) restartWorkload(ctx context.Context, dataplane string) error {
	patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, annotDataplane, dataplane)
	changed := false
	for _, ns := range p.namespaces {
		list, err := p.c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
		if err != nil {
			return fmt.Errorf("list deployments in %s: %w", ns, err)
		}
		for _, d := range list.Items {
			if d.Spec.Template.Annotations[annotDataplane] == dataplane {
				continue
			}
			// A merge patch: the annotation is not part of the workload's
			// applied configuration, so that Deploy leaves it alone.
			if _, err := p.c.kube.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("restart %s/%s: %w", ns, d.Name, err)
			}
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return p.waitRollouts(ctx, p.namespaces, selectorApps)
}

// RemoveMesh removes what InstallMesh installed, found by label in the
// cluster: mesh objects, namespace labels, Helm releases in reverse order
// and the system namespaces meshbench created. The workload's pods are
// re-created without sidecars.
func (p *kubePlatform) RemoveMesh(ctx context.Context) error {
	if err := p.removeMeshObjects(ctx, p.opts.RunID); err != nil {
		return fmt.Errorf("kubernetes: remove mesh: %w", err)
	}
	if p.namespaces != nil {
		if err := p.labelNamespaces(ctx, nil, nil); err != nil {
			return fmt.Errorf("kubernetes: remove mesh: %w", err)
		}
	}
	if err := p.removeReleases(ctx, p.opts.RunID); err != nil {
		return fmt.Errorf("kubernetes: remove mesh: %w", err)
	}
	if err := p.deleteNamespaces(ctx, p.selector(componentMesh)); err != nil {
		return fmt.Errorf("kubernetes: remove mesh: %w", err)
	}
	p.c.resetDiscovery()
	p.mesh = nil
	if p.namespaces != nil {
		if err := p.restartWorkload(ctx, ""); err != nil {
			return fmt.Errorf("kubernetes: remove mesh: %w", err)
		}
	}
	return nil
}
