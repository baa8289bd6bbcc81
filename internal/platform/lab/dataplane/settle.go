package dataplane

import (
	"context"
	"time"
)

// settleTimeout bounds how long settle keeps exercising a call.
const settleTimeout = 15 * time.Second

// settle sends requests along every call edge of the graph, and through
// the gateway to every entry, until each answers, before verification.
// Capture changes reset the apps' connections (resetConnections), and an
// app finds out that a pooled connection died only when it next uses it;
// real installs see the same transient errors until clients reconnect.
// Whatever still fails afterwards, verification reports.
func (in *Installation) settle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	var reqs []request
	for _, e := range in.edges() {
		target := hostPort(e.to.VIP.String(), e.to.Port)
		reqs = append(reqs, request{Netns: e.from.Netns, Addr: target, Host: target})
	}
	if in.ingress != nil {
		from := in.clientNetns()
		for _, s := range in.entries() {
			reqs = append(reqs, request{Netns: from, Addr: in.ingress.addr.String(), Path: "/" + s.Namespace + "/"})
		}
	}
	parallel(reqs, func(r request) {
		for ctx.Err() == nil {
			if status, err := in.get(ctx, r); err == nil && ok(status) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}
