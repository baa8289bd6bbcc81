package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// TestIntegrationRefusesForeignNamespace puts a user's ns-1 in the
// cluster: a run must refuse it, leave it and what is in it alone, and run
// under another namespace prefix.
func TestIntegrationRefusesForeignNamespace(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nss := c.Client.CoreV1().Namespaces()
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gone, not terminating, before the next test deploys its own ns-1.
		ctx := context.Background()
		_ = nss.Delete(ctx, "ns-1", metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := nss.Get(ctx, "ns-1", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "users-data"}, Data: map[string]string{"k": "v"}}
	if _, err := c.Client.CoreV1().ConfigMaps("ns-1").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	p := newTestPlatform(t, c)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1})
	if err == nil || !strings.Contains(err.Error(), "namespace ns-1 exists and meshbench did not create it") || !strings.Contains(err.Error(), "namespace_prefix") {
		t.Fatalf("Deploy into a user's ns-1: %v, want a refusal naming it and the prefix", err)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	ns, err := nss.Get(ctx, "ns-1", metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("the user's ns-1 after a refused run and Down: %v (deleting: %v)", err, ns != nil && ns.DeletionTimestamp != nil)
	}
	if len(ns.Labels) != 1 { // kubernetes.io/metadata.name only
		t.Errorf("the user's ns-1 was labelled: %v", ns.Labels)
	}
	if _, err := c.Client.CoreV1().ConfigMaps("ns-1").Get(ctx, "users-data", metav1.GetOptions{}); err != nil {
		t.Errorf("the user's ConfigMap in ns-1: %v", err)
	}

	q := newTestPlatformWith(t, c, func(o *Options) { o.NamespacePrefix = "mb-" })
	if err := q.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := q.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatalf("Deploy under prefix mb-: %v", err)
	}
	if got := strings.Join(q.namespaces, ","); got != "mb-1" {
		t.Errorf("workload namespaces %s, want mb-1", got)
	}
}

// TestIntegrationRunsSerialise starts two runs on one cluster: the second
// waits for the first's lease and refuses, naming it; neither touches the
// other's objects; once the first is down the second runs.
func TestIntegrationRunsSerialise(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first := newTestPlatform(t, c)
	if err := first.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := first.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	second := newTestPlatformWith(t, c, func(o *Options) { o.Timeout = 3 * time.Second; o.NamespacePrefix = "mb-" })
	err := second.Up(ctx, testClusterSpec)
	if err == nil || !strings.Contains(err.Error(), "another meshbench run holds the cluster: "+first.opts.RunID) {
		t.Fatalf("second run's Up while the first holds the cluster: %v, want a refusal naming run %s", err, first.opts.RunID)
	}
	second.opts.Timeout = 2 * time.Minute // for its clean-up's waits
	if err := second.Down(ctx); err != nil {
		t.Fatal(err)
	}
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, "ns-1", metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil || ns.Labels[labelRun] != first.opts.RunID {
		t.Fatalf("the first run's ns-1 after the second gave up: %v", err)
	}
	if _, err := c.Client.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the first run's lease after the second gave up: %v", err)
	}

	if err := first.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Up(ctx, testClusterSpec); err != nil {
		t.Fatalf("second run's Up after the first ended: %v", err)
	}
}

// TestIntegrationDownAfterKill kills a run with its mesh installed (it
// stops renewing its lease and never cleans up), and checks that the next
// run refuses what it left, and that `kubernetes down RUN` leaves the
// cluster as it was.
func TestIntegrationDownAfterKill(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	killed, err := newPlatform(Options{Kubeconfig: c.Kubeconfig, Context: runnerContext, Image: "meshbench.test/meshbench:it", Timeout: 2 * time.Minute,
		Prometheus: emptyPrometheus(t), Charts: testCharts(c)})
	if err != nil {
		t.Fatal(err)
	}
	if err := killed.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := killed.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 2}); err != nil {
		t.Fatal(err)
	}
	// Ambient's checks fail on kwok (no CNI agent enrols pods); what it
	// installed stays, as a killed run's would.
	_, _ = killed.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileAmbient})
	close(killed.lease.stop)
	<-killed.lease.done
	l, err := c.Client.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Its lease lapses as a killed run's does, by the server's clock,
	// shortened to a second so that the test need not wait a minute.
	l.Spec.LeaseDurationSeconds = ptr(int32(1))
	if _, err := c.Client.CoordinationV1().Leases(lockNamespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)

	items, err := Inventory(ctx, Options{Kubeconfig: c.Kubeconfig}, killed.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, it := range items {
		listed = append(listed, it.What)
	}
	for _, want := range []string{"namespace ns-1", "namespace ns-2", "namespace " + istioNamespace, "helm release " + istioNamespace + "/istiod"} {
		if !strings.Contains(strings.Join(listed, "\n"), want) {
			t.Errorf("inventory of the killed run lacks %q: %v", want, listed)
		}
	}

	next := newTestPlatform(t, c)
	if err := next.Up(ctx, testClusterSpec); err == nil || !strings.Contains(err.Error(), "meshbench kubernetes down "+killed.opts.RunID) {
		t.Errorf("next run's Up beside the killed run's objects: %v, want a refusal saying how to remove them", err)
	}
	if err := next.Down(ctx); err != nil {
		t.Fatal(err)
	}

	if err := Teardown(ctx, Options{Kubeconfig: c.Kubeconfig}, killed.opts.RunID); err != nil {
		t.Fatal(err)
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("kubernetes down left %d objects behind: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
	if gone := diffSnapshots(snapshot(t, ctx, c.Kubeconfig), before); len(gone) > 0 {
		t.Errorf("kubernetes down removed %d objects it did not make: %s", len(gone), strings.Join(firstN(gone, 20), ", "))
	}
	if _, err := c.Client.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the killed run's lease after down: %v, want it gone", err)
	}
}
