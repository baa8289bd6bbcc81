package cpstudy

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/xdsload"
)

// The kinds of change the study makes, in the order it cycles through
// them: each added pod is removed again three changes later, so that the
// population stays the same.
const (
	PodAdd      = "pod-add"
	AuthzChange = "authz-change"
	ServiceAdd  = "service-add"
	PodRemove   = "pod-remove"
)

var changeCycle = []string{PodAdd, AuthzChange, ServiceAdd, PodRemove}

// ChangeResult is one change and how long the affected proxies took to
// ACK configuration that reflects it.
type ChangeResult struct {
	Seq       int       `json:"seq"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Object    string    `json:"object"`
	At        time.Time `json:"at"`
	Affected  int       `json:"affected"`
	Acked     int       `json:"acked"`
	// Converged is the time from the change's API call until the last
	// affected proxy ACKed it, in seconds; absent when some did not within
	// the timeout.
	Converged *float64 `json:"converged_s,omitempty"`
	// AckSeconds are every affected proxy's times, sorted.
	AckSeconds []float64 `json:"ack_s"`
}

// waiter watches the clients' responses for one change. match says, by
// resource type, whether a response shows the change; each kind of proxy
// receives only its own types, so one waiter serves them all.
type waiter struct {
	match map[string]func(*xdsload.Response) bool
	start time.Time

	mu      sync.Mutex
	pending []bool
	left    int
	acks    []float64
	done    chan struct{}
}

func (w *waiter) observe(i int, r *xdsload.Response, at time.Time) {
	match, ok := w.match[r.TypeURL]
	if !ok {
		return
	}
	w.mu.Lock()
	want := w.pending[i]
	w.mu.Unlock()
	if !want || !match(r) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.pending[i] {
		return
	}
	w.pending[i] = false
	w.acks = append(w.acks, at.Sub(w.start).Seconds())
	w.left--
	if w.left == 0 {
		close(w.done)
	}
}

// tracker hands every response to the active waiters; the set is copied
// on write so that the clients' goroutines read it without a lock.
type tracker struct {
	mu      sync.Mutex
	waiters atomic.Pointer[[]*waiter]
}

func (t *tracker) onResponse(i int, r *xdsload.Response, at time.Time) {
	if ws := t.waiters.Load(); ws != nil {
		for _, w := range *ws {
			w.observe(i, r, at)
		}
	}
}

func (t *tracker) add(w *waiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ws []*waiter
	if cur := t.waiters.Load(); cur != nil {
		ws = slices.Clone(*cur)
	}
	ws = append(ws, w)
	t.waiters.Store(&ws)
}

func (t *tracker) drop(w *waiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.waiters.Load()
	if cur == nil {
		return
	}
	ws := slices.DeleteFunc(slices.Clone(*cur), func(x *waiter) bool { return x == w })
	t.waiters.Store(&ws)
}

// churn makes the changes, one every interval whatever the previous ones
// are doing (a stated, open-loop rate), and waits for each to converge or
// time out.
type churn struct {
	k       kube
	l       *layout
	mode    Mode
	targets []target // each client's
	tr      *tracker
	timeout time.Duration

	added    []addedPod // pods added and not yet removed
	services []addedPod // services added (svc holds the name)
	policies []int      // tiers whose policy a change rewrote
}

type addedPod struct{ name, ns, svc string }

func (c *churn) run(ctx context.Context, n int, interval time.Duration) ([]ChangeResult, error) {
	results := make([]ChangeResult, n)
	var wg sync.WaitGroup
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var firstErr error
	for seq := range n {
		if seq > 0 {
			select {
			case <-ctx.Done():
				wg.Wait()
				return nil, ctx.Err()
			case <-tick.C:
			}
		}
		w, res, err := c.make(ctx, seq)
		if err != nil {
			firstErr = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[seq] = c.await(ctx, w, res)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return results, nil
}

// affected marks the clients a change in namespace tier u must reach.
func (c *churn) affected(u int, wholeNamespaceOnly bool) ([]bool, int) {
	p := make([]bool, len(c.targets))
	n := 0
	for i, tg := range c.targets {
		var hit bool
		t := tg.tier
		switch {
		case tg.kind == xdsload.Ztunnel: // every node proxy gets every address and policy
			hit = true
		case tg.kind == xdsload.Waypoint:
			// A waypoint serves its namespace's services; the namespace's
			// policy selects workloads, and so is ztunnel's, not the
			// waypoint's (that takes a policy naming it in targetRefs).
			hit = t == u && !wholeNamespaceOnly
		case wholeNamespaceOnly: // a policy applies to its namespace's pods
			hit = t == u
		case c.mode == SidecarScoped: // a Sidecar shows its own tier and the one it calls
			hit = t == u || t == u-1
		default:
			hit = true
		}
		if hit {
			p[i] = true
			n++
		}
	}
	return p, n
}

// make performs change seq and returns a waiter registered before the API
// call, so that no response can slip past it.
func (c *churn) make(ctx context.Context, seq int) (*waiter, ChangeResult, error) {
	kind := changeCycle[seq%len(changeCycle)]
	if kind == PodRemove && len(c.added) == 0 {
		kind = PodAdd
	}
	tier := seq % len(c.l.Namespaces)
	ns := c.l.Namespaces[tier]
	res := ChangeResult{Seq: seq, Kind: kind, Namespace: ns}
	w := &waiter{done: make(chan struct{}), match: map[string]func(*xdsload.Response) bool{}}
	var act func() error
	switch kind {
	case PodAdd:
		var svcs []service
		for _, s := range c.l.Services {
			if s.Namespace == ns {
				svcs = append(svcs, s)
			}
		}
		s := svcs[seq%len(svcs)]
		name := fmt.Sprintf("mbx-%05d", seq)
		res.Object = name
		c.added = append(c.added, addedPod{name: name, ns: ns, svc: s.Name})
		w.pending, _ = c.affected(tier, false)
		address := []byte("Pod/" + ns + "/" + name)
		w.match[xdsload.TypeAddress] = func(r *xdsload.Response) bool { return bytes.Contains(r.Raw, address) }
		// Istio labels each endpoint with "workload;namespace;...".
		endpoint := []byte(name + ";" + ns + ";")
		w.match[xdsload.TypeEndpoint] = func(r *xdsload.Response) bool { return bytes.Contains(r.Raw, endpoint) }
		p := pod{Name: name, Namespace: ns, Service: s.Name, Node: c.l.Nodes[seq%len(c.l.Nodes)]}
		act = func() error {
			_, err := c.k.cs.CoreV1().Pods(ns).Create(ctx, podObject(p, nil), metav1.CreateOptions{})
			return err
		}
	case PodRemove:
		a := c.added[0]
		c.added = c.added[1:]
		ns = a.ns
		tier = slices.Index(c.l.Namespaces, ns)
		res.Namespace, res.Object = ns, a.name
		w.pending, _ = c.affected(tier, false)
		suffix := "Pod/" + ns + "/" + a.name
		w.match[xdsload.TypeAddress] = func(r *xdsload.Response) bool {
			return slices.ContainsFunc(r.Removed, func(n string) bool { return strings.HasSuffix(n, suffix) })
		}
		// The service's cluster, a sidecar's outbound|8080||host or a
		// waypoint's inbound-vip|8080|http|host, without the pod.
		cluster := []byte("|" + fqdn(a.svc, ns))
		endpoint := []byte(a.name + ";" + ns + ";")
		w.match[xdsload.TypeEndpoint] = func(r *xdsload.Response) bool {
			return bytes.Contains(r.Raw, cluster) && !bytes.Contains(r.Raw, endpoint)
		}
		act = func() error { return c.k.cs.CoreV1().Pods(ns).Delete(ctx, a.name, metav1.DeleteOptions{}) }
	case AuthzChange:
		token := fmt.Sprintf("mbchg-%05d", seq)
		res.Object = "tier-allow"
		w.pending, _ = c.affected(tier, true)
		needle := []byte(token)
		w.match[xdsload.TypeListener] = func(r *xdsload.Response) bool { return bytes.Contains(r.Raw, needle) }
		w.match[xdsload.TypeAuthorization] = w.match[xdsload.TypeListener]
		act = func() error {
			if err := c.setPolicy(ctx, tier, []string{"cluster.local/ns/" + ns + "/sa/" + token}); err != nil {
				return err
			}
			if !slices.Contains(c.policies, tier) {
				c.policies = append(c.policies, tier)
			}
			return nil
		}
	case ServiceAdd:
		name := fmt.Sprintf("mbsvc-%05d", seq)
		res.Object = name
		w.pending, _ = c.affected(tier, false)
		needle := []byte(name + "." + ns + ".svc")
		w.match[xdsload.TypeCluster] = func(r *xdsload.Response) bool { return bytes.Contains(r.Raw, needle) }
		w.match[xdsload.TypeAddress] = w.match[xdsload.TypeCluster]
		var selector string
		for _, s := range c.l.Services {
			if s.Namespace == ns {
				selector = s.Name
				break
			}
		}
		c.services = append(c.services, addedPod{ns: ns, svc: name})
		act = func() error {
			_, err := c.k.cs.CoreV1().Services(ns).Create(ctx, serviceObject(name, ns, selector), metav1.CreateOptions{})
			return err
		}
	}
	for _, p := range w.pending {
		if p {
			w.left++
		}
	}
	res.Affected = w.left
	if w.left == 0 {
		close(w.done)
	}
	w.start = time.Now()
	res.At = w.start
	c.tr.add(w)
	if err := act(); err != nil {
		c.tr.drop(w)
		return nil, res, fmt.Errorf("change %d (%s in %s): %w", seq, kind, ns, err)
	}
	return w, res, nil
}

// setPolicy rewrites tier's tier-allow policy with extra principals. A
// rewrite to what the policy already says is refused: the API server
// stores no such update and tells no watcher, so istiod would push nothing
// and the change could only time out (or, on a sidecar, match a listener
// that held the principal before).
func (c *churn) setPolicy(ctx context.Context, tier int, extra []string) error {
	ns := c.l.Namespaces[tier]
	r := c.k.dyn.Resource(gvrAuthz).Namespace(ns)
	cur, err := r.Get(ctx, "tier-allow", metav1.GetOptions{})
	if err != nil {
		return err
	}
	next := authzPolicy(ns, c.l.caller(tier), extra)
	if equality.Semantic.DeepEqual(cur.Object["spec"], next.Object["spec"]) {
		return fmt.Errorf("AuthorizationPolicy %s/tier-allow already holds principals %v", ns, extra)
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	_, err = r.Update(ctx, next, metav1.UpdateOptions{})
	return err
}

// undo deletes what the churn added and did not remove, and restores the
// policies it changed, so that the next mode starts from the same
// workload: its changes (whose principals are named by sequence number,
// the same in every mode) then change the policies again.
func (c *churn) undo(ctx context.Context) error {
	for _, a := range c.added {
		if err := c.k.cs.CoreV1().Pods(a.ns).Delete(ctx, a.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for _, s := range c.services {
		if err := c.k.cs.CoreV1().Services(s.ns).Delete(ctx, s.svc, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for _, tier := range c.policies {
		if err := c.setPolicy(ctx, tier, nil); err != nil {
			return err
		}
	}
	c.added, c.services, c.policies = nil, nil, nil
	return nil
}

func (c *churn) await(ctx context.Context, w *waiter, res ChangeResult) ChangeResult {
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	case <-ctx.Done():
	}
	c.tr.drop(w)
	w.mu.Lock()
	defer w.mu.Unlock()
	res.Acked = len(w.acks)
	res.AckSeconds = slices.Clone(w.acks)
	slices.Sort(res.AckSeconds)
	if w.left == 0 {
		v := 0.0
		if len(res.AckSeconds) > 0 {
			v = res.AckSeconds[len(res.AckSeconds)-1]
		}
		res.Converged = &v
	}
	return res
}
