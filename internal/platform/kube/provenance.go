package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkInstalled is the check that records, per cell, what a mesh install
// put in the cluster. It passes when the record could be made.
const checkInstalled = "mesh-installed"

// factExisting, on the installed check, names the mesh the study said to
// use as the cluster runs it (use_existing), which meshbench did not
// install; factExisting+"/images" are its system namespaces' images.
const factExisting = "existing"

// installedChart is one chart an install put in the cluster.
type installedChart struct {
	Release string
	Chart   string // the chart's own name
	Version string
	Source  string // where it came from, as the study named it
	Values  map[string]any
}

// instanceTypeLabels name a node's machine type, newest first.
var instanceTypeLabels = []string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}

// installedCheck records what the installed mesh is made of, after
// install, so that results say what ran, not what was pinned: each chart's
// name, version and source, the values as installed (secrets redacted)
// and their hash, every image the mesh's and the workload's pods run, the
// Kubernetes version, and each role's nodes (machine type, kernel,
// kubelet, capacity). ConfigHash hashes it all.
func (p *kubePlatform) installedCheck(ctx context.Context) (mesh.Check, error) {
	facts := map[string]string{}
	v, err := p.c.kube.Discovery().ServerVersion()
	if err != nil {
		return mesh.Check{}, fmt.Errorf("server version: %w", err)
	}
	facts["kubernetes"] = v.GitVersion
	var charts []string
	for _, c := range p.mesh.Charts {
		values, err := json.Marshal(redact(c.Values))
		if err != nil {
			return mesh.Check{}, fmt.Errorf("values of %s: %w", c.Release, err)
		}
		sum := sha256.Sum256(values)
		facts["chart/"+c.Release] = fmt.Sprintf("%s %s from %s", c.Chart, c.Version, c.Source)
		facts["values/"+c.Release] = string(values)
		facts["values-sha256/"+c.Release] = hex.EncodeToString(sum[:])
		charts = append(charts, c.Release+" "+c.Chart+" "+c.Version)
	}
	images, err := p.images(ctx, append(slices.Clone(p.namespaces), p.mesh.Plan.Namespaces...))
	if err != nil {
		return mesh.Check{}, err
	}
	facts["images"] = strings.Join(images, " ")
	existing := ""
	if pl := p.mesh.Plan; pl.Spec.UseExisting {
		// The mesh as found: its version is its control plane's images.
		found, err := p.images(ctx, pl.Namespaces)
		if err != nil {
			return mesh.Check{}, err
		}
		facts[factExisting] = pl.Profile.Mesh
		facts[factExisting+"/images"] = strings.Join(found, " ")
		existing = fmt.Sprintf("the existing %s (not installed by meshbench: %s)", pl.Profile.Mesh, strings.Join(found, " "))
	}
	for role, names := range p.nodes {
		for _, name := range names {
			n, err := p.c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return mesh.Check{}, fmt.Errorf("node %s: %w", name, err)
			}
			facts["node/"+string(role)+"/"+name] = nodeFacts(n)
		}
	}
	all, err := json.Marshal(facts) // map keys marshal sorted
	if err != nil {
		return mesh.Check{}, err
	}
	sum := sha256.Sum256(all)
	detail := "no charts"
	if len(charts) > 0 {
		detail = strings.Join(charts, ", ")
	}
	if existing != "" {
		detail = existing + "; " + detail
	}
	return mesh.Check{
		Name: checkInstalled, Pass: true, Facts: facts, ConfigHash: hex.EncodeToString(sum[:]),
		Detail: fmt.Sprintf("%s; %d images; Kubernetes %s", detail, len(images), v.GitVersion),
	}, nil
}

// images lists the distinct images the pods of the namespaces run, init
// containers included (an injected proxy may be one).
func (p *kubePlatform) images(ctx context.Context, namespaces []string) ([]string, error) {
	seen := map[string]bool{}
	for _, ns := range namespaces {
		pods, err := p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		for _, pod := range pods.Items {
			ids := map[string]string{}
			for _, cs := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
				ids[cs.Name] = cs.ImageID
			}
			for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
				seen[withDigest(c.Image, ids[c.Name])] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// withDigest names an image by its tag and the digest the node resolved
// it to (the container status's image ID), since a tag can move.
func withDigest(image, imageID string) string {
	if _, digest, ok := strings.Cut(imageID, "@"); ok && strings.HasPrefix(digest, "sha256:") {
		return image + "@" + digest
	}
	if strings.HasPrefix(imageID, "sha256:") && !strings.Contains(image, "@") {
		return image + " (image " + imageID + ")"
	}
	return image
}

// nodeFacts describes a node for the record.
func nodeFacts(n *corev1.Node) string {
	typ := "unknown type"
	for _, l := range instanceTypeLabels {
		if v := n.Labels[l]; v != "" {
			typ = v
			break
		}
	}
	ni := n.Status.NodeInfo
	return fmt.Sprintf("%s, %s CPUs, %s memory, kernel %s, kubelet %s, %s",
		typ, n.Status.Capacity.Cpu(), n.Status.Capacity.Memory(), ni.KernelVersion, ni.KubeletVersion, ni.ContainerRuntimeVersion)
}

// redact returns values with private keys replaced, so that the record
// keeps what shapes the install but no secret (Linkerd's issuer key).
func redact(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		switch {
		case strings.Contains(strings.ToLower(k), "key") && isString(x):
			out[k] = "(redacted)"
		case isMap(x):
			out[k] = redact(x.(map[string]any))
		default:
			out[k] = x
		}
	}
	return out
}

func isString(x any) bool { _, ok := x.(string); return ok }
func isMap(x any) bool    { _, ok := x.(map[string]any); return ok }
