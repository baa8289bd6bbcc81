package kube

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dumpOnFailure logs the namespaces' Deployments, pods and events, and the
// tails of the control plane's logs, when the test fails.
func (c *testCluster) dumpOnFailure(t *testing.T, namespaces ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for _, ns := range namespaces {
			deps, _ := c.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			for _, d := range deps.Items {
				t.Logf("deployment %s/%s: %+v", ns, d.Name, d.Status)
			}
			pods, _ := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			for _, p := range pods.Items {
				t.Logf("pod %s/%s on %q: %s %v", ns, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
			}
			events, _ := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			for _, e := range events.Items {
				t.Logf("event %s/%s: %s %s", ns, e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
		nodes, _ := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		for _, n := range nodes.Items {
			t.Logf("node %s: ready %v, taints %v", n.Name, usable(n), n.Spec.Taints)
		}
		for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
			b, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
			t.Logf("%s log tail: %s", name, tail(b, 8))
		}
	})
}
