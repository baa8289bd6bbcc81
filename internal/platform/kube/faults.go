package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/metrics"
)

// watchedPods lists the pods of the namespaces a measurement watches.
func (p *kubePlatform) watchedPods(ctx context.Context) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for _, ns := range p.watchedNamespaces() {
		list, err := p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// restartCounts maps each measured container ("namespace/pod/container")
// to its restart count.
func restartCounts(pods []corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for i := range pods {
		pod := &pods[i]
		for _, cs := range pod.Status.ContainerStatuses {
			if _, ok := classify(pod, cs.Name); ok {
				out[pod.Namespace+"/"+pod.Name+"/"+cs.Name] = cs.RestartCount
			}
		}
	}
	return out
}

// restartFaults names every measured container that restarted since the
// counts in before were taken, a proxy's as "proxy restarted". A pod that
// was not there before (a load generator's) is not counted.
func restartFaults(pods []corev1.Pod, before map[string]int32) []string {
	var out []string
	for i := range pods {
		pod := &pods[i]
		for _, cs := range pod.Status.ContainerStatuses {
			key := pod.Namespace + "/" + pod.Name + "/" + cs.Name
			was, ok := before[key]
			role, measured := classify(pod, cs.Name)
			if !ok || !measured || cs.RestartCount <= was {
				continue
			}
			what := "container"
			switch role {
			case metrics.RoleSidecar, metrics.RoleNodeProxy, metrics.RoleWaypoint, metrics.RoleIngress:
				what = "proxy"
			}
			out = append(out, fmt.Sprintf("%s restarted: %s (restarts: %d before the measurement, %d after)", what, key, was, cs.RestartCount))
		}
	}
	return out
}
