package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// A run owns what it makes: every object carries the run's id, and
// clean-up, prune and rollback select by it, so that neither another run's
// objects nor anything meshbench did not make is ever removed. A Lease
// serialises runs on one cluster.
const (
	// labelRun names the run that made an object.
	labelRun = "meshbench.io/run"

	// lockNamespace holds the Lease; it carries no run label, so that no
	// run's clean-up selects it, and goes when the holder releases it.
	lockNamespace = "meshbench-system"
	lockName      = "meshbench-run"
	componentLock = "lock"
	// leaseDuration is how long a holder that stops renewing (a killed
	// run) keeps the cluster; it renews every leaseRenew.
	leaseDuration = 60 * time.Second
	leaseRenew    = 20 * time.Second
)

// runIDPattern is what a run id may be: a label value that also reads
// well in a command line.
var runIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// NewRunID returns a fresh run id: the UTC time and a random suffix.
func NewRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// checkRunID says whether id can name a run.
func checkRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("run id %q: want lower-case letters, digits and '-', at most 63, such as %s", id, NewRunID())
	}
	return nil
}

// runSelector selects what run made; "" selects what every run made.
func runSelector(run string) string {
	if run == "" {
		return selectorManaged + "," + labelRun
	}
	return selectorManaged + "," + labelRun + "=" + run
}

// selector selects this run's objects of one component.
func (p *kubePlatform) selector(component string) string {
	return runSelector(p.opts.RunID) + "," + labelComponent + "=" + component
}

// apply applies objects as this run's: each carries the run's label, and
// an object that exists and is not this run's (a namespace, or anything
// in a namespace the run did not make) is refused, not adopted:
// server-side apply would take its fields over. Namespaces go first, each
// with the rights meshbench takes in them (bindSelf).
func (p *kubePlatform) apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	var nss, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
			nss = append(nss, o)
		} else {
			rest = append(rest, o)
		}
	}
	if err := p.claim(ctx, nss); err != nil {
		return err
	}
	if err := p.c.apply(ctx, nss, false); err != nil {
		return err
	}
	for _, ns := range nss {
		if err := p.bindSelf(ctx, ns.GetName()); err != nil {
			return err
		}
	}
	if err := p.claim(ctx, rest); err != nil {
		return err
	}
	return p.c.apply(ctx, rest, false)
}

// claim labels objects as this run's, and refuses those that exist and
// are not.
func (p *kubePlatform) claim(ctx context.Context, objs []*unstructured.Unstructured) error {
	ours := map[string]bool{} // namespace -> made by this run
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[labelRun] = p.opts.RunID
		o.SetLabels(l)
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
			if err := p.claimNamespace(ctx, o.GetName()); err != nil {
				return err
			}
			ours[o.GetName()] = true
			continue
		}
		if err := p.claimObject(ctx, o, ours); err != nil {
			return err
		}
	}
	return nil
}

// claimObject refuses an object in a namespace this run did not make
// that exists and is not this run's. ours caches what is known of the
// namespaces.
func (p *kubePlatform) claimObject(ctx context.Context, o *unstructured.Unstructured, ours map[string]bool) error {
	ns := o.GetNamespace()
	if ns == "" {
		return nil
	}
	mine, known := ours[ns]
	if !known {
		n, err := p.c.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
		mine = err == nil && n.Labels[labelManagedBy] == managedBy && n.Labels[labelRun] == p.opts.RunID
		ours[ns] = mine
	}
	if mine {
		return nil
	}
	ri, err := p.c.resourceFor(o.GroupVersionKind(), ns)
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(o), err)
	}
	cur, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", describe(o), err)
	}
	if l := cur.GetLabels(); l[labelManagedBy] != managedBy || l[labelRun] != p.opts.RunID {
		return fmt.Errorf("%s exists and this run did not make it: meshbench will neither change nor delete it; remove it if it is meshbench's, or run on another cluster", describe(o))
	}
	return nil
}

// claimNamespace refuses a namespace that exists and that this run did not
// create, saying whose it is and what to do.
func (p *kubePlatform) claimNamespace(ctx context.Context, name string) error {
	ns, err := p.c.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	owner := ns.Labels[labelRun]
	switch {
	case ns.Labels[labelManagedBy] == managedBy && owner == p.opts.RunID:
		return nil
	case ns.Labels[labelManagedBy] == managedBy && owner != "":
		return fmt.Errorf("namespace %s exists, left by meshbench run %s: remove what that run left with: meshbench kubernetes down %s", name, owner, owner)
	}
	hint := "delete it yourself if it is meshbench's, or run on another cluster"
	if p.isWorkloadNamespace(name) {
		hint = "name the workload's namespaces otherwise with platform.kubernetes.namespace_prefix, such as \"mb-\" (mb-1 ... mb-N)"
	}
	return fmt.Errorf("namespace %s exists and meshbench did not create it: meshbench will neither use nor delete it; %s", name, hint)
}

// isWorkloadNamespace says whether name is one of the workload's
// namespaces, PREFIXn.
func (p *kubePlatform) isWorkloadNamespace(name string) bool {
	prefix := strings.TrimSuffix(workloadNamespaces(p.opts.NamespacePrefix, 1)[0], "1")
	n, ok := strings.CutPrefix(name, prefix)
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// namespacePrefixPattern is what a namespace prefix may be: with a number
// after it, a namespace name.
var namespacePrefixPattern = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,49})$`)

// leftovers names what other meshbench runs left in the cluster:
// namespaces and Helm releases, with the run that made each.
func (p *kubePlatform) leftovers(ctx context.Context) (map[string][]string, error) {
	inv, err := p.inventory(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, it := range inv {
		if it.Run != p.opts.RunID {
			out[it.Run] = append(out[it.Run], it.What)
		}
	}
	return out, nil
}

// refuseLeftovers refuses a cluster that holds what another run left (a
// run killed outright): its objects would clash, and only the user may
// say they can go.
func (p *kubePlatform) refuseLeftovers(ctx context.Context) error {
	left, err := p.leftovers(ctx)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		return nil
	}
	runs := make([]string, 0, len(left))
	for r := range left {
		runs = append(runs, r)
	}
	sort.Strings(runs)
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("run %s (%s)", r, strings.Join(left[r], ", ")))
	}
	return fmt.Errorf("the cluster holds what other meshbench runs left: %s; remove it with: meshbench kubernetes down %s (or --all)",
		strings.Join(parts, "; "), runs[0])
}

// refuseForeignMeshes refuses a mesh profile whose mesh already runs in the
// cluster, installed by someone other than meshbench: installing over it
// would break it, and removing ours would remove theirs. A mesh the study
// says to use (use_existing) must be there instead. A mesh's API groups
// are named after it (security.istio.io, policy.linkerd.io). Cilium is
// the cluster's network, never installed by meshbench.
func (p *kubePlatform) refuseForeignMeshes(ctx context.Context) error {
	meshes := map[string]bool{} // mesh -> use the existing one
	for _, m := range p.opts.Meshes {
		pr, err := lookupProfile(m.Profile)
		if err != nil {
			return err
		}
		if pr.Mesh != "" && pr.Plane != mesh.PlaneCNI {
			meshes[pr.Mesh] = m.UseExisting
		}
	}
	if len(meshes) == 0 {
		return nil
	}
	list, err := p.c.dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list CRDs: %w", err)
	}
	found := map[string]string{} // mesh -> a CRD of it meshbench did not install
	for _, crd := range list.Items {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		for m := range meshes {
			if group != m+".io" && !strings.HasSuffix(group, "."+m+".io") {
				continue
			}
			if crd.GetLabels()[labelRun] != "" && crd.GetLabels()[labelRelease] != "" {
				continue // a meshbench run's: refuseLeftovers names it
			}
			found[m] = crd.GetName()
		}
	}
	for _, m := range slices.Sorted(maps.Keys(meshes)) {
		crd, there := found[m]
		switch {
		case there && !meshes[m]:
			return fmt.Errorf("the cluster already runs %s, which meshbench did not install (CRD %s): meshbench will neither install over it nor remove it; "+
				"run the study on a cluster without %s, or measure the installed one with use_existing: true on the study's %s meshes (meshbench then never removes it)", m, crd, m, m)
		case !there && meshes[m]:
			return fmt.Errorf("the study's %s meshes say use_existing, but the cluster runs no %s (no CRD of an %s.io API group): install it, or drop use_existing", m, m, m)
		}
	}
	return nil
}

// lease is this process's hold on the cluster.
type lease struct {
	holder string
	stop   chan struct{}
	done   chan struct{}
	// lost ends, with the loss as its cause, when another holder took the
	// Lease or it could not be renewed in time.
	lost   context.Context
	cancel context.CancelCauseFunc
}

// errLeaseLost is the cause of a lease's loss.
var errLeaseLost = errors.New("lost the cluster's lease")

// holder is what the Lease says of this run, for another run's message.
func (p *kubePlatform) holder() string {
	return holderOf(p.opts.RunID)
}

func holderOf(what string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s (host %s, pid %d)", what, host, os.Getpid())
}

// acquire takes the cluster's Lease for holder, waiting up to the timeout
// while another live holder keeps it, and keeps it renewed until release.
// A holder that stopped renewing (killed) loses it leaseDuration after its
// last renewal, by the API server's clock.
func (p *kubePlatform) acquire(ctx context.Context, holder string) error {
	if p.lease != nil {
		return nil
	}
	leases := p.c.kube.CoordinationV1().Leases(lockNamespace)
	var other string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		// RenewTime and AcquireTime are informational: expiry is judged
		// by the server's timestamps, never by this machine's clock.
		now := metav1.NewMicroTime(time.Now())
		// The namespace first: under the namespaced role, meshbench may
		// read nothing in it before it made it.
		if err := p.ensureLockNamespace(ctx); err != nil {
			return false, err
		}
		l, err := leases.Get(ctx, lockName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l := &coordinationv1.Lease{
				ObjectMeta: objMeta(lockNamespace, lockName, map[string]string{labelComponent: componentLock}),
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr(holder), LeaseDurationSeconds: ptr(int32(leaseDuration / time.Second)),
					AcquireTime: &now, RenewTime: &now},
			}
			_, err := leases.Create(ctx, l, metav1.CreateOptions{FieldManager: fieldManager})
			if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) && isTerminating(err) {
				return false, nil // another run was quicker, or the namespace is going
			}
			return err == nil, err
		}
		if err != nil {
			return false, pollErr(ctx, err)
		}
		live, err := p.leaseLive(ctx, l)
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) && isTerminating(err) {
			return false, nil // the namespace is going
		}
		if err != nil {
			return false, pollErr(ctx, err)
		}
		if h := deref(l.Spec.HolderIdentity); live {
			other = h
			p.log.Info("waiting for another meshbench run to release the cluster", "holder", h)
			return false, nil
		}
		l.Spec.HolderIdentity, l.Spec.AcquireTime, l.Spec.RenewTime = ptr(holder), &now, &now
		l.Spec.LeaseDurationSeconds = ptr(int32(leaseDuration / time.Second))
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: fieldManager})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		if other != "" && ctx.Err() == nil {
			return fmt.Errorf("another meshbench run holds the cluster: %s; waited %s (platform.kubernetes.timeout); try again when it ends", other, p.opts.Timeout)
		}
		return fmt.Errorf("take the cluster's lease %s/%s: %w", lockNamespace, lockName, err)
	}
	lost, cancel := context.WithCancelCause(context.Background())
	p.lease = &lease{holder: holder, stop: make(chan struct{}), done: make(chan struct{}), lost: lost, cancel: cancel}
	go p.renew(p.lease)
	p.log.Info("holding the cluster", "holder", holder, "lease", lockNamespace+"/"+lockName)
	return nil
}

// leaseLive says whether a Lease's holder renews it, by the API server's
// clock: the server's time of the last write to it (its managed fields'
// times, which the server stamps) against the server's time now.
func (p *kubePlatform) leaseLive(ctx context.Context, l *coordinationv1.Lease) (bool, error) {
	if deref(l.Spec.HolderIdentity) == "" || l.Spec.LeaseDurationSeconds == nil {
		return false, nil
	}
	now, err := p.serverNow(ctx)
	if err != nil {
		return false, err
	}
	return now.Before(lastWrite(l).Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)), nil
}

// lastWrite is when the API server last stored a change to an object:
// the latest time in its managed fields, else its creation.
func lastWrite(o metav1.Object) time.Time {
	t := o.GetCreationTimestamp().Time
	for _, f := range o.GetManagedFields() {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// serverNow is the API server's time, read from the creation time it
// gives a Lease created as a dry run (nothing is stored).
func (p *kubePlatform) serverNow(ctx context.Context) (time.Time, error) {
	probe := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{GenerateName: "meshbench-clock-", Namespace: lockNamespace}}
	got, err := p.c.kube.CoordinationV1().Leases(lockNamespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's time: %w", err)
	}
	return got.CreationTimestamp.Time, nil
}

// renew keeps the Lease until stopped. When another holder has it, or it
// could not be renewed for long enough that another may take it, the
// lease is lost: renew says so and ends l.lost, which stops the run's
// work (held).
func (p *kubePlatform) renew(l *lease) {
	defer close(l.done)
	t := time.NewTicker(leaseRenew)
	defer t.Stop()
	leases := p.c.kube.CoordinationV1().Leases(lockNamespace)
	renewed := time.Now() // on this machine's monotonic clock: a span, not a time
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leaseRenew)
		cur, err := leases.Get(ctx, lockName, metav1.GetOptions{})
		var cause error
		switch {
		case apierrors.IsNotFound(err):
			cause = fmt.Errorf("%w %s/%s: it was deleted", errLeaseLost, lockNamespace, lockName)
		case err == nil && deref(cur.Spec.HolderIdentity) != l.holder:
			cause = fmt.Errorf("%w %s/%s to %s", errLeaseLost, lockNamespace, lockName, deref(cur.Spec.HolderIdentity))
		case err == nil:
			cur.Spec.RenewTime = ptr(metav1.NewMicroTime(time.Now()))
			if _, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager}); err == nil {
				renewed = time.Now()
			}
		}
		cancel()
		if cause == nil && err != nil {
			p.log.Warn("renewing the cluster's lease", "err", err)
			if since := time.Since(renewed); since > leaseDuration-leaseRenew {
				cause = fmt.Errorf("%w %s/%s: not renewed for %s, and another run may take it after %s: %v", errLeaseLost, lockNamespace, lockName, since.Round(time.Second), leaseDuration, err)
			}
		}
		if cause != nil {
			p.log.Error("stopping this run's work", "err", cause)
			l.cancel(cause)
			return
		}
	}
}

// held is ctx, ended too when this run loses the cluster's lease, with
// the loss as its cause: the run's work stops where it is (Deploy,
// InstallMesh and Measure roll back or return), and what was running says
// why (leaseErr).
func (p *kubePlatform) held(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.lease == nil {
		return context.WithCancel(ctx)
	}
	lost := p.lease.lost
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(lost, func() { cancel(context.Cause(lost)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// lostLease is the lease's loss, or nil while it is held (or none was
// taken).
func (p *kubePlatform) lostLease() error {
	if p.lease == nil {
		return nil
	}
	return context.Cause(p.lease.lost)
}

// leaseErr says that the run stopped for the loss of its lease when that
// is err, or why ctx ended; else it is err.
func leaseErr(ctx context.Context, err error) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(err, errLeaseLost):
		return fmt.Errorf("kubernetes: %w: this run stopped its work", err)
	case err != nil && errors.Is(cause, errLeaseLost):
		return fmt.Errorf("kubernetes: %w: this run stopped its work (%v)", cause, err)
	}
	return err
}

// release gives the cluster up while it still holds it. After a loss it
// touches nothing: the Lease and its namespace are the new holder's. Else
// it renews once more, which the server refuses if anyone wrote the Lease
// since, and so holds it for leaseDuration: no run can take it while the
// namespace goes, and a run that waits makes a new one. The namespace
// stays, with the Lease deleted, while it holds a run's record (releases
// to remove).
func (p *kubePlatform) release(ctx context.Context) error {
	l := p.lease
	if l == nil {
		return nil
	}
	p.lease = nil
	close(l.stop)
	<-l.done
	if cause := context.Cause(l.lost); cause != nil {
		return fmt.Errorf("%w; left it and its namespace %s to its holder", cause, lockNamespace)
	}
	leases := p.c.kube.CoordinationV1().Leases(lockNamespace)
	var held *coordinationv1.Lease
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := leases.Get(ctx, lockName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := deref(cur.Spec.HolderIdentity); h != l.holder {
			return fmt.Errorf("%w %s/%s to %s; left it and its namespace to its holder", errLeaseLost, lockNamespace, lockName, h)
		}
		cur.Spec.RenewTime = ptr(metav1.NewMicroTime(time.Now()))
		held, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w %s/%s: it was deleted; left its namespace alone", errLeaseLost, lockNamespace, lockName)
	}
	if err != nil {
		return err
	}
	records, err := p.installedReleases(ctx, "")
	if err != nil {
		return err
	}
	if len(records) > 0 {
		err := leases.Delete(ctx, lockName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &held.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("release the lease %s/%s: %w", lockNamespace, lockName, err)
		}
		return nil
	}
	return p.deleteLockNamespace(ctx)
}

// deleteLockNamespace deletes the lease's namespace and waits until it is
// gone: that one, by its UID, since a run that waited may make a new one
// as soon as it is.
func (p *kubePlatform) deleteLockNamespace(ctx context.Context) error {
	nss := p.c.kube.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, lockNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", lockNamespace, err)
	}
	p.log.Info("deleting namespace", "namespace", lockNamespace)
	err = nss.Delete(ctx, lockNamespace, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ns.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or another one
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", lockNamespace, err)
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := nss.Get(ctx, lockNamespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, pollErr(ctx, err)
		}
		return cur.UID != ns.UID, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s still terminating: %w", lockNamespace, err)
	}
	return nil
}

// lockNamespaceExists says whether the Lease's namespace is there: under
// the namespaced role, reading in a namespace that is not gives
// forbidden, not not-found.
func (p *kubePlatform) lockNamespaceExists(ctx context.Context) (bool, error) {
	_, err := p.c.kube.CoreV1().Namespaces().Get(ctx, lockNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("namespace %s: %w", lockNamespace, err)
	}
	return true, nil
}

// ensureLockNamespace creates the Lease's namespace unless it exists, and
// refuses one meshbench did not create.
func (p *kubePlatform) ensureLockNamespace(ctx context.Context) error {
	nss := p.c.kube.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, lockNamespace, metav1.GetOptions{})
	if err == nil {
		if ns.Labels[labelManagedBy] != managedBy || ns.Labels[labelComponent] != componentLock {
			return fmt.Errorf("namespace %s exists and meshbench did not create it: meshbench keeps its lease there; remove it, or run on another cluster", lockNamespace)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s: %w", lockNamespace, err)
	}
	_, err = nss.Create(ctx, &corev1.Namespace{ObjectMeta: objMeta("", lockNamespace, map[string]string{labelComponent: componentLock})},
		metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return p.bindSelf(ctx, lockNamespace)
}

// isTerminating says whether err refuses a create in a namespace that is
// being deleted.
func isTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
