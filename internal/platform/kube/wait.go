package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// pollInterval is how often waits look at the cluster.
const pollInterval = time.Second

// replicaFailureGrace is how long a Deployment may report ReplicaFailure
// before a wait gives up on it: the first pods created right after a
// mesh's control plane comes up can meet its injection webhook not yet
// serving (FailedCreate), which the ReplicaSet controller retries. A
// variable, so that a test can wait less.
var replicaFailureGrace = 30 * time.Second

// pollErr is a poll condition's error: none when the poll's own deadline
// caused it, so that the poll reports the timeout, and what was pending.
func pollErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// rolloutState says whether a Deployment has rolled out, and if it cannot,
// why: a ReplicaFailure condition (such as an unreachable injection
// webhook) fails at once rather than at the timeout.
func rolloutState(d *appsv1.Deployment) (done bool, failure string) {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return false, c.Reason + ": " + c.Message
		}
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, c.Message
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want &&
		s.Replicas == want && s.AvailableReplicas == want, ""
}

// daemonSetReady reports whether a DaemonSet runs its current version,
// ready, on every node it should.
func daemonSetReady(d *appsv1.DaemonSet) bool {
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedNumberScheduled == s.DesiredNumberScheduled &&
		s.NumberReady == s.DesiredNumberScheduled && s.NumberUnavailable == 0
}

// waitRollouts waits until every Deployment and DaemonSet matching
// selector in the namespaces has rolled out, failing fast when a
// Deployment cannot.
func (p *kubePlatform) waitRollouts(ctx context.Context, namespaces []string, selector string) error {
	var pending []string
	failing := map[string]time.Time{} // deployment -> when it first reported a failure
	err := wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		pending = pending[:0]
		opts := metav1.ListOptions{LabelSelector: selector}
		for _, ns := range namespaces {
			deps, err := p.c.kube.AppsV1().Deployments(ns).List(ctx, opts)
			if err != nil {
				return false, pollErr(ctx, fmt.Errorf("list deployments in %s: %w", ns, err))
			}
			for i := range deps.Items {
				d := &deps.Items[i]
				done, failure := rolloutState(d)
				key := ns + "/" + d.Name
				if failure == "" {
					delete(failing, key)
				} else if since, ok := failing[key]; !ok {
					failing[key] = time.Now()
				} else if time.Since(since) >= replicaFailureGrace {
					return false, fmt.Errorf("deployment %s cannot roll out (for %s): %s", key, replicaFailureGrace, failure)
				}
				if !done {
					pending = append(pending, "deployment "+ns+"/"+d.Name)
				}
			}
			dss, err := p.c.kube.AppsV1().DaemonSets(ns).List(ctx, opts)
			if err != nil {
				return false, pollErr(ctx, fmt.Errorf("list daemonsets in %s: %w", ns, err))
			}
			for i := range dss.Items {
				if !daemonSetReady(&dss.Items[i]) {
					pending = append(pending, "daemonset "+ns+"/"+dss.Items[i].Name)
				}
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err)) && ctx.Err() == nil {
		sort.Strings(pending)
		return fmt.Errorf("not ready after %s: %s%s", p.opts.Timeout,
			strings.Join(firstN(pending, 5), ", "), p.podHint(ctx, namespaces, selector))
	}
	return err
}

// podHint explains why pods are not ready, from the first waiting
// container's reason (ImagePullBackOff, CrashLoopBackOff, Unschedulable).
func (p *kubePlatform) podHint(ctx context.Context, namespaces []string, selector string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, ns := range namespaces {
		pods, err := p.c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return ""
		}
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					return fmt.Sprintf(" (pod %s/%s unschedulable: %s)", ns, pod.Name, c.Message)
				}
			}
			for _, cs := range pod.Status.ContainerStatuses {
				if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
					return fmt.Sprintf(" (pod %s/%s container %s: %s %s)", ns, pod.Name, cs.Name, w.Reason, w.Message)
				}
			}
		}
	}
	return ""
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}
