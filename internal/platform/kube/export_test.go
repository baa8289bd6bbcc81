package kube

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
)

// What the external test package (kube_test), which drives the whole CLI
// and so cannot live in package kube without an import cycle, needs of
// the shared test cluster.
var (
	NeedCluster     = needCluster
	EmptyPrometheus = emptyPrometheus
	Snapshot        = snapshot
	DiffSnapshots   = diffSnapshots
	RunnerContext   = runnerContext
)

// PodImages makes a platform on the test cluster running image, deploys
// the tiered workload and runs one load Job, and returns the image of
// every container meshbench made in those pods, as the API server holds
// the pods kwok runs, by pod name.
func PodImages(t *testing.T, c *testCluster, image string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := newTestPlatformWith(t, c, func(o *Options) { o.Image = image })
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	pods, err := p.appPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.runJobs(ctx, []jobSpec{{Namespace: "ns-1", Name: "meshbench-image-it", Component: componentLoad, ServiceAccount: loadServiceAccount,
		Load: load.Options{URL: p.entryURL("ns-1"), Connections: 1, Requests: 1, Timeout: time.Second}, Place: p.place(infra.NodeLoad), Deadline: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if !podRunning(res[0].Pod) && res[0].Pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("the load Job's pod %s is %s", res[0].Pod.Name, res[0].Pod.Status.Phase)
	}
	out := map[string][]string{}
	for _, pod := range append(pods, *res[0].Pod) {
		for _, ct := range pod.Spec.Containers {
			out[pod.Name] = append(out[pod.Name], ct.Image)
		}
	}
	return out
}

func podRunning(pod *corev1.Pod) bool { return pod.Status.Phase == corev1.PodRunning }
