package dataplane

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// buildWaypoint builds a namespace's waypoint as Istio does: 15008
// terminates HBONE, keeping the CONNECT authority (a Service VIP:port) and
// the peer's identity in filter state for the internal listener
// main_internal, which restores the VIP as destination, picks the
// Service's filter chain and runs it at L7 (HTTP routing, optionally the
// L7 policy on the peer's identity), then balances over the Service's
// pods and tunnels to each over HBONE with the waypoint's own identity.
func buildWaypoint(v *view, ns, name string, s Settings, dir string, l7 bool) *proxy {
	nodeID := fmt.Sprintf("waypoint~0.0.0.0~%s.%s~%s.svc.cluster.local", name, ns, ns)
	p := newProxy("waypoint/"+ns+"/"+name, dir, metrics.RoleWaypoint, nodeID, waypointName+"."+ns, s.Workers)
	p.tunnels()
	cert := p.cert(SPIFFEID(ns, waypointAccount), "workload", RSA2048)

	terminate := connectTerminate(p, "connect_terminate",
		[]envoycfg.VirtualHost{{Name: "default", Domains: []string{"*"}, Routes: []envoycfg.Route{connectRoute("main_internal")}}},
		// The authority and the peer also go in as hashable strings:
		// upstream connections to main_internal are pooled, and only
		// hashable shared objects partition the pool, so that a stream
		// never rides a connection made for another VIP or identity (Istio
		// uses its istio.hashable_string factory the same way).
		envoycfg.SetFilterState(
			envoycfg.FilterStateValue{ObjectKey: "envoy.filters.listener.original_dst.local_ip", FormatString: envoycfg.Text("%REQ(:AUTHORITY)%"), SharedWithUpstream: "ONCE"},
			envoycfg.FilterStateValue{ObjectKey: connectAuthorityKey, FactoryKey: "envoy.hashable_string", FormatString: envoycfg.Text("%REQ(:AUTHORITY)%"), SharedWithUpstream: "ONCE"},
			envoycfg.FilterStateValue{ObjectKey: peerPrincipalKey, FactoryKey: "envoy.hashable_string", FormatString: envoycfg.Text("%DOWNSTREAM_PEER_URI_SAN%"), SharedWithUpstream: "ONCE"},
		))
	hbone := envoycfg.Listener{
		Name:    "connect_terminate",
		Address: envoycfg.SockAddr("0.0.0.0", portHBONE),
		FilterChains: []envoycfg.FilterChain{{
			Name: "default", Filters: []envoycfg.Extension{envoycfg.HCMFilter(terminate)}, TransportSocket: hboneServerTLS(p, cert),
		}},
		Balance: &envoycfg.BalanceConfig{ExactBalance: &envoycfg.Empty{}},
	}
	p.addListener(hbone)
	p.addCluster(envoycfg.Cluster{
		Name: "main_internal", Type: "STATIC", ConnectTimeout: connectTimeout,
		LoadAssignment:  envoycfg.StaticEndpoints("main_internal", envoycfg.InternalAddr("main_internal", "")),
		CircuitBreakers: envoycfg.IstioCircuitBreakers(),
		TransportSocket: envoycfg.InternalUpstreamSocket(),
	})

	var chains []envoycfg.FilterChain
	for _, svc := range v.svcByNS[ns] {
		name := fmt.Sprintf("inbound-vip|%d|http|%s", svc.Port, svc.Host())
		var filters []envoycfg.Extension
		if l7 {
			filters = append(filters, envoycfg.HTTPRBAC(l7Rules(svc, v.allowedPrincipals(svc), true)))
		}
		filters = append(filters, envoycfg.Router())
		h := istioHCM(name, envoycfg.RouteConfig{
			Name: name, ValidateClusters: envoycfg.Bool(false),
			VirtualHosts: []envoycfg.VirtualHost{{
				Name: hostPort(svc.Host(), svc.Port), Domains: []string{"*"},
				Routes: []envoycfg.Route{{Name: "default", Match: envoycfg.RouteMatch{Prefix: "/"}, Route: &envoycfg.RouteAct{Cluster: name, Timeout: noTimeout}}},
			}},
		}, filters...)
		chains = append(chains, envoycfg.FilterChain{
			Name:    name,
			Match:   &envoycfg.FilterChainMatch{PrefixRanges: envoycfg.Host(svc.VIP.String()), DestinationPort: svc.Port},
			Filters: []envoycfg.Extension{envoycfg.HCMFilter(h)},
		})
		c := tunnelCluster(name, "connect_originate", "LEAST_REQUEST", serviceTargets(v, svc, nil))
		c.ProtocolOptions = envoycfg.DownstreamProtocolOptions()
		p.addCluster(c)
	}
	p.addListener(envoycfg.Listener{
		Name:             "main_internal",
		InternalListener: &envoycfg.Empty{},
		ListenerFilters:  []envoycfg.Extension{envoycfg.OriginalDst()},
		TrafficDirection: "INBOUND",
		FilterChains:     chains,
	})
	addConnectOriginate(p, "connect_originate", cert, trustDomainPrefix+"ns/"+ns+"/sa/", nil)
	return p
}

// startWaypoints runs WaypointReplicas waypoints in every namespace with
// meshed app pods, each on the node that runs most of them.
func (in *Installation) startWaypoints(ctx context.Context, l7 bool) error {
	byNS := map[string]map[string]int{}
	for _, p := range in.inv.meshedPods("") {
		if p.Role != metrics.RoleApp {
			continue
		}
		if byNS[p.Namespace] == nil {
			byNS[p.Namespace] = map[string]int{}
		}
		byNS[p.Namespace][p.Node]++
	}
	var namespaces []string
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		node := busiest(byNS[ns])
		for i := 0; i < in.settings.WaypointReplicas; i++ {
			name := fmt.Sprintf("%s-%d", waypointName, i)
			dir := filepath.Join(in.o.Dir, "waypoint", ns, name)
			spec := PodSpec{Namespace: ns, Name: name, Node: node, ServiceAccount: waypointAccount}
			var pod Pod
			var p *proxy
			var err error
			if in.plane != nil {
				pod, p, err = in.startIstiodWaypoint(ctx, spec, dir)
			} else {
				p = buildWaypoint(in.inv, ns, name, in.settings, dir, l7)
				spec.Containers = []Container{in.waypointContainer(p)}
				pod, err = in.addPod(ctx, spec, p)
			}
			if err != nil {
				return err
			}
			in.waypoints[ns] = append(in.waypoints[ns], &pod)
			in.wpProxies[pod.Key()] = p
		}
	}
	return nil
}

// waypointContainer is how a waypoint proxy runs: named as the profile's
// family names its proxy container, with the waypoint's resources.
func (in *Installation) waypointContainer(p *proxy) Container {
	return in.container(p, in.settings.profile().Family().SidecarContainer, in.settings.Waypoint)
}

// busiest is the node with the highest count, the first name on ties.
func busiest(count map[string]int) string {
	var best string
	for n, c := range count {
		if best == "" || c > count[best] || c == count[best] && n < best {
			best = n
		}
	}
	return best
}
