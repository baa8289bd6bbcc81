package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Cilium is the cluster's network plugin, not a mesh to install per cell:
// removing it between cells would break pod networking, installing it over
// a running one would clash. meshbench never installs or removes it. The
// cilium profile measures a cluster that already runs Cilium the way the
// bookinfo study's earlier report ran it (WireGuard node encryption,
// mutual authentication through SPIRE); meshbench checks that before
// anything is created, and per cell applies only the policies that
// require mutual authentication.
const (
	ciliumNamespace = "kube-system"
	ciliumAgent     = "cilium" // the agent's DaemonSet
	ciliumConfig    = "cilium-config"
	spireNamespace  = "cilium-spire"
	// annotWireGuardKey is the node annotation the Cilium agent sets when
	// WireGuard encryption is up on that node.
	annotWireGuardKey = "network.cilium.io/wg-pub-key"
)

var ciliumPolicyGVK = schema.GroupVersionKind{Group: "cilium.io", Version: "v2", Kind: "CiliumNetworkPolicy"}

// ciliumSettings are the cilium-config keys the profile needs, with the
// Helm values that set them, for the refusal's fix.
var ciliumSettings = []struct{ key, helm string }{
	{"enable-wireguard", "encryption.enabled=true,encryption.type=wireguard"},
	{"mesh-auth-enabled", "authentication.enabled=true"},
	{"mesh-auth-mutual-enabled", "authentication.mutual.spire.enabled=true,authentication.mutual.spire.install.enabled=true"},
}

// ciliumReady says why the cluster cannot host the cilium profile, or ""
// when it can: the Cilium agent runs, ready, on every node it should, and
// its configuration has WireGuard and SPIRE mutual authentication on.
func (p *kubePlatform) ciliumReady(ctx context.Context) (string, error) {
	ds, err := p.c.kube.AppsV1().DaemonSets(ciliumNamespace).Get(ctx, ciliumAgent, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "the cluster does not run Cilium (no DaemonSet " + ciliumNamespace + "/" + ciliumAgent + "): " +
			"the cilium profile measures a cluster whose network plugin is Cilium, and meshbench never installs one; " +
			"name such a cluster for this mesh (its kubeconfig context), or drop the mesh", nil
	}
	if err != nil {
		return "", fmt.Errorf("cilium agent: %w", err)
	}
	if !daemonSetReady(ds) || ds.Status.DesiredNumberScheduled == 0 {
		return fmt.Sprintf("the Cilium agent is not ready (%d of %d agents ready): fix the cluster's Cilium first",
			ds.Status.NumberReady, ds.Status.DesiredNumberScheduled), nil
	}
	cm, err := p.c.kube.CoreV1().ConfigMaps(ciliumNamespace).Get(ctx, ciliumConfig, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "Cilium runs but has no ConfigMap " + ciliumNamespace + "/" + ciliumConfig + " to show its settings", nil
	}
	if err != nil {
		return "", fmt.Errorf("cilium config: %w", err)
	}
	var off, fix []string
	for _, s := range ciliumSettings {
		if cm.Data[s.key] != "true" {
			off = append(off, s.key)
			fix = append(fix, s.helm)
		}
	}
	if len(off) > 0 {
		return fmt.Sprintf("the cluster's Cilium lacks %s: the cilium profile measures WireGuard encryption with SPIRE mutual authentication; "+
			"upgrade the cluster's Cilium with --set %s, or name a cluster that runs it so", strings.Join(off, ", "), strings.Join(fix, ",")), nil
	}
	return "", nil
}

// ciliumPlan applies, per workload namespace, a policy that admits only
// the namespace's own endpoints and requires every connection to be
// mutually authenticated (SPIRE-issued identities); with an ingress, the
// entry service also admits the plain gateway, authenticated too.
func (p *kubePlatform) ciliumPlan(pl meshPlan) (meshPlan, error) {
	for _, ns := range p.namespaces {
		pl.Objects = append(pl.Objects, ciliumPolicy(ns, "meshbench-mutual-auth", map[string]any{}, map[string]any{}))
		if p.opts.Ingress {
			pl.Objects = append(pl.Objects, ciliumPolicy(ns, "meshbench-ingress",
				map[string]any{"matchLabels": map[string]any{labelApp: p.workload.Graph.Entry}},
				map[string]any{"matchLabels": map[string]any{"k8s:io.kubernetes.pod.namespace": plainIngressNamespace}}))
		}
	}
	return pl, nil
}

// ciliumPolicy admits from the endpoints from selects to those endpoints
// selects, each connection mutually authenticated.
func ciliumPolicy(ns, name string, endpoints, from map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
		"metadata": meshMeta(ns, name),
		"spec": map[string]any{
			"endpointSelector": endpoints,
			"ingress": []any{map[string]any{
				"fromEndpoints":  []any{from},
				"authentication": map[string]any{"mode": "required"},
			}},
		},
	}}
}

// checkProfiles refuses, before anything is created, the profiles the
// cluster cannot host, naming each with its fix.
func (p *kubePlatform) checkProfiles(ctx context.Context) error {
	var refused []string
	for _, m := range p.opts.Meshes {
		name := m.Profile
		pr, err := lookupProfile(name)
		if err != nil {
			return err
		}
		if err := p.existingIngress(m, pr); err != nil {
			refused = append(refused, err.Error())
			continue
		}
		if pr.Plane != mesh.PlaneCNI {
			continue
		}
		why, err := p.ciliumReady(ctx)
		if err != nil {
			return err
		}
		if why != "" {
			refused = append(refused, fmt.Sprintf("profile %s: %s", name, why))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("the cluster cannot host %s", strings.Join(refused, "; "))
	}
	return nil
}
