package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/meshbench/meshbench/internal/mesh"
)

// edge is a call the graph makes: a caller pod to a Service.
type edge struct {
	from *Pod
	to   *Service
}

// edges lists, per Service with callers, one calling pod.
func (in *Installation) edges() []edge {
	var out []edge
	for i := range in.inv.Services {
		s := &in.inv.Services[i]
		if callers := in.inv.callerPods(s); len(callers) > 0 {
			out = append(out, edge{callers[0], s})
		}
	}
	return out
}

// checkIdentity sends a request along every call edge through the mesh
// and reads, from the destination side's access log, the identity in the
// certificate the caller's side presented: the caller's SPIFFE ID (for a
// waypoint: the caller's at the waypoint, the waypoint's at the pod).
func (in *Installation) checkIdentity(ctx context.Context) mesh.Check {
	off, err := in.logStreams(ctx)
	if err != nil {
		return mesh.Check{Name: CheckIdentity, Detail: err.Error()}
	}
	defer off()
	es := in.edges()
	var mu sync.Mutex
	var bad []string
	var unsent int
	// Probes may overlap: a sidecar's log lines carry the probe's nonce,
	// a node proxy's or waypoint's are matched on both the authority and
	// the expected peer, which only a call along the same edge produces.
	parallel(es, func(e edge) {
		if err := in.probeIdentity(ctx, e); err != nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s -> %s: %v", e.from.Key(), e.to.Key(), err))
			if errors.Is(err, errNoLocalPort) {
				unsent++
			}
			mu.Unlock()
		}
	})
	c := result(CheckIdentity, len(es), bad, "calls carry the caller's identity")
	if unsent > 0 && unsent == len(bad) {
		c.Unverified = errNoLocalPort.Error()
	}
	return c
}

// identityLog is where a call's identity shows: the lines of tail that
// are about the call, and the SPIFFE ID they must carry.
type identityLog struct {
	tail     logTail
	relevant func(string) bool
	want     string
}

func (in *Installation) probeIdentity(ctx context.Context, e edge) error {
	id := nonce()
	in.mu.Lock()
	exps := in.dp.IdentityLogs(in, e, id)
	in.mu.Unlock()
	if len(exps) == 0 {
		return fmt.Errorf("the %T data plane names no log that shows a call's identity", in.dp)
	}
	target := hostPort(e.to.VIP.String(), e.to.Port)
	status, err := in.get(ctx, request{Netns: e.from.Netns, Addr: target, Host: target, Header: map[string]string{probeHeader: id}})
	if err != nil {
		return fmt.Errorf("no answer: %w", err)
	}
	if !ok(status) {
		return fmt.Errorf("answered %d", status)
	}
	for _, x := range exps {
		if err := x.tail.waitLine(ctx, x.relevant, x.want); err != nil {
			return err
		}
	}
	return nil
}

// logStreams turns the HBONE log on for every stream until the returned
// function turns it off again, unless the mesh logs every stream anyway
// or an enclosing call (Verify) already turned it on. A waypoint pools
// its tunnels to the pods, so a probe may ride one opened before the log
// was on: Verify logs from before its first probe to after its last, so
// that the tunnels its checks open, which later probes ride, are logged.
func (in *Installation) logStreams(ctx context.Context) (off func(), err error) {
	in.mu.Lock()
	nested := in.settings.AccessLog || in.logging
	in.logging = true
	in.mu.Unlock()
	if nested {
		return func() {}, nil
	}
	off = func() {
		in.mu.Lock()
		in.logging = false
		in.mu.Unlock()
		if err := in.connectLog(context.WithoutCancel(ctx), 0); err != nil {
			in.o.Logger.Warn("turn the HBONE log off again", "err", err)
		}
	}
	if err := in.connectLog(ctx, 100); err != nil {
		off()
		return nil, err
	}
	return off, nil
}

// connectLogKey is the runtime key that sets the share of HBONE streams
// the node proxies and waypoints log, in percent.
const connectLogKey = "meshbench.connect_log"

// connectLog sets the share of HBONE streams every node proxy and
// waypoint logs.
func (in *Installation) connectLog(ctx context.Context, percent int) error {
	in.mu.Lock()
	var ps []*proxy
	for _, p := range in.nodes {
		ps = append(ps, p)
	}
	for _, p := range in.wpProxies {
		ps = append(ps, p)
	}
	in.mu.Unlock()
	var mu sync.Mutex
	var errs []error
	parallel(ps, func(p *proxy) {
		body, code, err := adminDo(ctx, http.MethodPost, p.path(adminSocket), fmt.Sprintf("/runtime_modify?%s=%d", connectLogKey, percent))
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("%d %s", code, strings.TrimSpace(body))
		}
		if err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("set %s on %s: %w", connectLogKey, p.Name, err))
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}

// nodeLogs are the HBONE logs of the node proxies of the given pods.
func (in *Installation) nodeLogs(pods []*Pod) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pods {
		if px := in.nodes[p.Node]; px != nil && !seen[p.Node] {
			seen[p.Node] = true
			out = append(out, px.path(connLogFile))
		}
	}
	return out
}

// checkAllowed: every edge of the graph still works under the policy.
func (in *Installation) checkAllowed(ctx context.Context) mesh.Check {
	es := in.edges()
	var mu sync.Mutex
	var bad []string
	parallel(es, func(e edge) {
		status, err := in.get(ctx, request{Netns: e.from.Netns, Addr: hostPort(e.to.VIP.String(), e.to.Port), Host: hostPort(e.to.VIP.String(), e.to.Port)})
		if err != nil || !ok(status) {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s (%s) -> %s: %d %v", e.from.Key(), e.from.Identity(), e.to.Key(), status, err))
			mu.Unlock()
		}
	})
	return result(CheckAllowed, len(es), bad, "allowed calls succeed")
}

// checkDenied: for every Service, a meshed pod of its namespace whose
// identity the policy does not list is refused (an L4 policy resets the
// connection, an L7 one answers 403); with an L7 policy, an allowed
// caller asking for a path under /admin/ gets 403 too.
func (in *Installation) checkDenied(ctx context.Context) mesh.Check {
	f := in.settings.profile()
	type attempt struct {
		what string
		req  request
	}
	var as []attempt
	for i := range in.inv.Services {
		s := &in.inv.Services[i]
		target := hostPort(s.VIP.String(), s.Port)
		allowed := in.inv.allowedPrincipals(s)
		for _, p := range in.inv.meshedPods("") {
			if p.Namespace == s.Namespace && !slices.Contains(allowed, p.Identity()) {
				as = append(as, attempt{fmt.Sprintf("%s (%s) -> %s", p.Key(), p.Identity(), s.Key()), request{Netns: p.Netns, Addr: target, Host: target}})
				break
			}
		}
		if callers := in.inv.callerPods(s); f.L7Policy && len(callers) > 0 {
			as = append(as, attempt{fmt.Sprintf("%s -> %s%sdenied", callers[0].Key(), s.Key(), deniedPathPrefix),
				request{Netns: callers[0].Netns, Addr: target, Host: target, Path: deniedPathPrefix + "denied"}})
		}
	}
	var mu sync.Mutex
	var bad []string
	parallel(as, func(a attempt) {
		status, err := in.get(ctx, a.req)
		refused := err != nil || status == 403
		if f.L4Policy {
			refused = err != nil
		}
		if !refused {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s: answered %d", a.what, status))
			mu.Unlock()
		}
	})
	return result(CheckDenied, len(as), bad, "excluded requests refused")
}

// checkIngress requests each namespace's entry through the gateway from
// a node other than the gateway's, as a client outside the cluster.
func (in *Installation) checkIngress(ctx context.Context) mesh.Check {
	from := in.clientNetns()
	entries := in.entries()
	var mu sync.Mutex
	var bad []string
	parallel(entries, func(s *Service) {
		status, err := in.get(ctx, request{Netns: from, Addr: in.ingress.addr.String(), Path: "/" + s.Namespace + "/"})
		if err != nil || !ok(status) {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("/%s/ -> %s: %d %v", s.Namespace, s.Key(), status, err))
			mu.Unlock()
		}
	})
	return result(CheckIngress, len(entries), bad, "namespaces reachable through the gateway")
}

// clientNetns is where an outside client of the gateway sits: a node
// other than the gateway's.
func (in *Installation) clientNetns() string {
	for _, n := range in.inv.Nodes {
		if n.IP != in.ingress.addr.Addr() {
			return n.Netns
		}
	}
	return in.inv.Nodes[0].Netns
}

// entries are the Services load enters at, one per namespace.
func (in *Installation) entries() []*Service {
	var out []*Service
	for i := range in.inv.Services {
		if in.inv.Services[i].Entry {
			out = append(out, &in.inv.Services[i])
		}
	}
	return out
}
