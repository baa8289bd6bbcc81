package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/platform"
)

// removeLockNamespace deletes the lease's namespace as the admin and waits
// until it is gone, so that the next test starts without it.
func removeLockNamespace(t *testing.T, c *testCluster) {
	t.Helper()
	ctx := context.Background()
	nss := c.Client.CoreV1().Namespaces()
	_ = nss.Delete(ctx, lockNamespace, metav1.DeleteOptions{})
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := nss.Get(ctx, lockNamespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("namespace %s still there: %v", lockNamespace, err)
	}
}

// fakeHolder makes the lease's namespace as meshbench makes it and a
// Lease held by holder, as the admin.
func fakeHolder(t *testing.T, ctx context.Context, c *testCluster, holder string, renew time.Time, seconds int32) *coordinationv1.Lease {
	t.Helper()
	t.Cleanup(func() { removeLockNamespace(t, c) })
	ns := &corev1.Namespace{ObjectMeta: objMeta("", lockNamespace, map[string]string{labelComponent: componentLock})}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := c.Client.CoordinationV1().Leases(lockNamespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: objMeta(lockNamespace, lockName, map[string]string{labelComponent: componentLock}),
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr(holder), LeaseDurationSeconds: ptr(seconds),
			AcquireTime: ptr(metav1.NewMicroTime(renew)), RenewTime: ptr(metav1.NewMicroTime(renew))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestIntegrationLeaseServerClock checks that a lease's expiry is judged
// by the API server's clock, not by the clocks of the machines that run
// meshbench: a holder whose clock runs ten minutes slow, renewing all the
// while, keeps the cluster; a holder whose clock ran an hour fast, which
// stopped renewing, loses it when its duration has passed.
func TestIntegrationLeaseServerClock(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("live holder, slow clock", func(t *testing.T) {
		const holder = "slow-clock (host elsewhere, pid 1)"
		fakeHolder(t, ctx, c, holder, time.Now().Add(-10*time.Minute), int32(leaseDuration/time.Second))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // it renews every second, stamping its slow clock
			defer wg.Done()
			leases := c.Client.CoordinationV1().Leases(lockNamespace)
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
				}
				patch := `{"spec":{"renewTime":"` + time.Now().Add(-10*time.Minute).UTC().Format(metav1.RFC3339Micro) + `"}}`
				_, _ = leases.Patch(ctx, lockName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			}
		}()
		defer func() { close(stop); wg.Wait() }()
		p := newTestPlatformWith(t, c, func(o *Options) { o.Timeout = 5 * time.Second })
		if err := p.Up(ctx, testClusterSpec); err == nil || !strings.Contains(err.Error(), "another meshbench run holds the cluster: "+holder) {
			t.Fatalf("Up beside a live holder whose clock is slow: %v, want a refusal naming it", err)
		}
	})

	t.Run("dead holder, fast clock", func(t *testing.T) {
		fakeHolder(t, ctx, c, "fast-clock (host elsewhere, pid 1)", time.Now().Add(time.Hour), 2)
		time.Sleep(3 * time.Second) // its duration, by the server's clock
		p := newTestPlatformWith(t, c, func(o *Options) { o.Timeout = 20 * time.Second })
		if err := p.Up(ctx, testClusterSpec); err != nil {
			t.Fatalf("Up after a holder with a fast clock stopped renewing: %v, want the cluster taken", err)
		}
	})
}

// TestIntegrationLeaseLost takes a run's lease from under it, as an
// operator or a run that judged it expired would: the run notices, stops
// its work and says why, and its Down leaves the lease and its namespace
// to the new holder.
func TestIntegrationLeaseLost(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Cleanup(func() { removeLockNamespace(t, c) })
	p := newTestPlatform(t, c)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	const thief = "thief (host elsewhere, pid 1)"
	leases := c.Client.CoordinationV1().Leases(lockNamespace)
	l, err := leases.Get(ctx, lockName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = ptr(thief)
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(leaseRenew + 5*time.Second) // one renewal, and a margin
	err = p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1})
	if err == nil || !strings.Contains(err.Error(), "lease") || !strings.Contains(err.Error(), thief) {
		t.Errorf("Deploy after the lease was taken: %v, want it stopped, naming the lease and its holder", err)
	}
	if ns, err := c.Client.CoreV1().Namespaces().Get(ctx, "ns-1", metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("Deploy made ns-1 after the lease was lost")
	}
	if err := p.Down(ctx); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Errorf("Down after the lease was lost: %v, want it to say the lease was lost", err)
	}
	got, err := leases.Get(ctx, lockName, metav1.GetOptions{})
	if err != nil || deref(got.Spec.HolderIdentity) != thief {
		t.Errorf("the new holder's lease after the old holder's Down: %v (%v)", got, err)
	}
}

// TestIntegrationDownHoldsLease runs `kubernetes down` of a killed run's
// leftovers while a new run starts: down holds the lease while it works,
// so the new run waits for it, and down leaves the new run its lease and
// the lease's namespace.
func TestIntegrationDownHoldsLease(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const killed = "20260101-000000-deadbe"
	nss := c.Client.CoreV1().Namespaces()
	// What the killed run left: a namespace that takes a while to go (a
	// finalizer the test removes).
	left := &corev1.Namespace{ObjectMeta: objMeta("", "mb-left-1", map[string]string{labelRun: killed, labelComponent: componentWorkload})}
	left.Finalizers = []string{"meshbench.test/hold"}
	if _, err := nss.Create(ctx, left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	release := func() {
		_, _ = nss.Patch(context.Background(), left.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)
	t.Cleanup(func() { removeLockNamespace(t, c) })

	down := make(chan error, 1)
	go func() {
		down <- Teardown(ctx, Options{Kubeconfig: c.Kubeconfig, Context: runnerContext, Timeout: 2 * time.Minute}, killed)
	}()
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, time.Minute, true, func(ctx context.Context) (bool, error) {
		ns, err := nss.Get(ctx, left.Name, metav1.GetOptions{})
		return err == nil && ns.DeletionTimestamp != nil, nil
	}); err != nil {
		t.Fatalf("down never deleted the killed run's namespace: %v", err)
	}
	l, err := c.Client.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{})
	if err != nil || !strings.HasPrefix(deref(l.Spec.HolderIdentity), "kubernetes down") {
		t.Errorf("the lease while down works: %v (%v), want down holding it", l, err)
	}

	next := newTestPlatform(t, c)
	up := make(chan error, 1)
	go func() { up <- next.Up(ctx, testClusterSpec) }()
	var upErr error
	upDone := false
	select {
	case upErr = <-up:
		upDone = true
		t.Errorf("a run started while down works: Up returned %v before down ended, want it to wait for the lease", upErr)
	case <-time.After(3 * time.Second):
	}
	release()
	if err := <-down; err != nil {
		t.Fatalf("kubernetes down: %v", err)
	}
	if !upDone {
		upErr = <-up
	}
	if upErr != nil {
		t.Fatalf("the run that waited for down: %v", upErr)
	}
	l, err = c.Client.CoordinationV1().Leases(lockNamespace).Get(ctx, lockName, metav1.GetOptions{})
	if err != nil || deref(l.Spec.HolderIdentity) != next.holder() {
		t.Fatalf("the new run's lease after down ended: %v (%v), want it held by %s", l, err, next.holder())
	}
	if ns, err := nss.Get(ctx, lockNamespace, metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("the lease's namespace under the new run: %v (deleting %v)", err, ns != nil && ns.DeletionTimestamp != nil)
	}
}
