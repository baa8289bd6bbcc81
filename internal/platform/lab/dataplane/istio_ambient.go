package dataplane

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/meshbench/meshbench/internal/mesh"
)

// IstioAmbient is the Istio-style ambient data plane: an L4 node proxy
// (ztunnel) on every node with meshed pods, taking their traffic by
// TPROXY in the node's namespace, and, for a waypoint profile, L7
// waypoints per namespace.
type IstioAmbient struct{}

// Install starts the waypoints the profile asks for, the ingress
// gateway and the node proxies, then captures each node's meshed pods.
func (IstioAmbient) Install(ctx context.Context, in *Installation) error {
	f := in.settings.profile()
	if f.Waypoint {
		if err := in.startWaypoints(ctx, f.L7Policy); err != nil {
			return err
		}
	}
	if err := in.startIngress(ctx); err != nil {
		return err
	}
	if err := in.startNodeProxies(ctx, f.L4Policy); err != nil {
		return err
	}
	// Capture last, once every proxy answers, so that no connection is
	// redirected to a proxy that is not there yet.
	for i := range in.inv.Nodes {
		n := &in.inv.Nodes[i]
		var ips []netip.Addr
		for _, p := range in.inv.meshedPods(n.Name) {
			ips = append(ips, p.IP)
		}
		if len(ips) > 0 {
			if err := in.applyCapture(ctx, ambientCapture(n.Netns, ips)); err != nil {
				return err
			}
		}
	}
	return in.resetConnections(ctx)
}

// Checks check that each meshed pod's node sends its traffic to the
// Upstream is HBONE to each meshed pod's node proxy.
func (IstioAmbient) Upstream() upstreamMode { return hboneUpstream }

// IdentityLogs are HBONE logs, matched on the CONNECT authority: without a
// waypoint, the callee's node proxy logs the caller's identity; with one,
// the waypoint logs the caller's and the callee's node proxy the
// waypoint's.
func (IstioAmbient) IdentityLogs(in *Installation, e edge, _ string) []identityLog {
	backends := in.inv.backends(e.to)
	var endpoints []string
	for _, ep := range e.to.Endpoints {
		endpoints = append(endpoints, ep.String())
	}
	toPod := func(l string) bool { return slices.Contains(endpoints, field(l, "authority")) }
	if len(in.waypoints[e.to.Namespace]) == 0 {
		return []identityLog{{markLogs(in.nodeLogs(backends)...), toPod, e.from.Identity()}}
	}
	var wl []string
	for _, w := range in.waypoints[e.to.Namespace] {
		wl = append(wl, in.wpProxies[w.Key()].path(connLogFile))
	}
	vip := hostPort(e.to.VIP.String(), e.to.Port)
	// The waypoint pools its tunnels to the pods: the call may ride one
	// opened earlier, so any tunnel from it counts, not only new ones.
	whole := logTail{}
	for _, l := range in.nodeLogs(backends) {
		whole[l] = 0
	}
	return []identityLog{
		{markLogs(wl...), func(l string) bool { return field(l, "authority") == vip }, e.from.Identity()},
		{whole, toPod, SPIFFEID(e.to.Namespace, waypointAccount)},
	}
}

// node proxy, and that the node proxy is ready.
func (IstioAmbient) Checks(in *Installation) []func(context.Context) mesh.Check {
	return []func(context.Context) mesh.Check{func(ctx context.Context) mesh.Check {
		return in.checkCaptured(ctx, func(p *Pod) (*proxy, string, []string) {
			return in.nodes[p.Node], in.inv.nodes[p.Node].Netns, []string{"-A PREROUTING -j " + chainAmbientPre,
				fmt.Sprintf("-A %s -s %s/32 -p tcp -j TPROXY --on-port %d", chainAmbientPre, p.IP, portOutbound),
				fmt.Sprintf("-A %s -d %s/32 -p tcp -m tcp --dport %d -j TPROXY --on-port %d", chainAmbientPre, p.IP, portHBONE, portHBONE),
				fmt.Sprintf("-A %s -d %s/32 -p tcp -j TPROXY --on-port %d", chainAmbientPre, p.IP, portInbound)}
		})
	}}
}
