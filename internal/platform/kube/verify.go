package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verify checks, before anything is measured, that the profile is really
// in force: every pod carries its proxy or is enrolled, node proxies run
// where the pods are, mTLS refuses plaintext and policies deny what they
// should. A check that cannot be made fails, with the reason.
func (p *kubePlatform) verify(ctx context.Context, pl meshPlan) ([]mesh.Check, error) {
	pods, err := p.appPods(ctx)
	if err != nil {
		return nil, err
	}
	checks := podChecks(pl.Profile, pods)
	cluster, err := p.clusterChecks(ctx, pl.Profile, pods)
	if err != nil {
		return checks, err
	}
	checks = append(checks, cluster...)
	probes, err := p.probeChecks(ctx, pl)
	if err != nil {
		return checks, err
	}
	checks = append(checks, probes...)
	// After the probes, whose meshed calls the mesh has counted.
	if pl.Profile.MTLSProbe {
		if c := p.peerIdentityCheck(ctx, pl.Profile); c != nil {
			checks = append(checks, *c)
		}
	}
	return checks, nil
}

// appPods lists the workload's pods, leaving out those being deleted.
func (p *kubePlatform) appPods(ctx context.Context) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for _, ns := range p.namespaces {
		list, err := p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selectorApps})
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		for _, pod := range list.Items {
			if pod.DeletionTimestamp == nil {
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

// podChecks are the checks made on the pods alone.
func podChecks(pr profile, pods []corev1.Pod) []mesh.Check {
	checks := []mesh.Check{
		podCheck("pods-ready", "every app pod is ready", pods, func(pod *corev1.Pod) bool { return podReady(pod) }),
	}
	switch pr.Plane {
	case mesh.PlaneNone:
		checks = append(checks, podCheck("no-data-plane", "no app pod has a proxy or is enrolled", pods, func(pod *corev1.Pod) bool {
			return sidecarOf(pod) == "" && pod.Annotations[annotRedirection] != "enabled"
		}))
	case mesh.PlaneSidecar:
		checks = append(checks, podCheck("sidecar-injected", "every app pod carries "+pr.Proxy, pods, func(pod *corev1.Pod) bool {
			return sidecarOf(pod) == pr.Proxy
		}))
	case mesh.PlaneNodeProxy:
		checks = append(checks, podCheck("ambient-enrolled",
			"every app pod is enrolled ("+annotRedirection+"=enabled) and has no sidecar", pods, func(pod *corev1.Pod) bool {
				return pod.Annotations[annotRedirection] == "enabled" && sidecarOf(pod) == ""
			}))
	}
	return checks
}

// podCheck passes when ok holds for every pod (and there are pods),
// naming the first pods it fails for.
func podCheck(name, what string, pods []corev1.Pod, ok func(*corev1.Pod) bool) mesh.Check {
	var bad []string
	for i := range pods {
		if !ok(&pods[i]) {
			bad = append(bad, pods[i].Namespace+"/"+pods[i].Name)
		}
	}
	c := mesh.Check{Name: name, Pass: len(bad) == 0 && len(pods) > 0}
	switch {
	case len(pods) == 0:
		c.Detail = "no app pods found"
	case len(bad) > 0:
		sort.Strings(bad)
		c.Detail = fmt.Sprintf("%d of %d pods fail (%s): %s", len(bad), len(pods), what, strings.Join(firstN(bad, 5), ", "))
	default:
		c.Detail = fmt.Sprintf("%d pods: %s", len(pods), what)
	}
	return c
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sidecarOf names the mesh proxy container in a pod, or "".
func sidecarOf(pod *corev1.Pod) string {
	for _, c := range runningContainers(pod) {
		if mesh.IsSidecarContainer(c.Name) {
			return c.Name
		}
	}
	return ""
}
