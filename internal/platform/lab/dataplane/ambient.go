package dataplane

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// proxyMark is ztunnel's mark on its own sockets (0x539), which the node's
// capture rules let through.
var proxyMark = &envoycfg.BindConfig{SocketOptions: []envoycfg.SocketOption{envoycfg.SOMark(0x539)}}

// nodeProxyCaps are all the node proxy keeps of root: CAP_NET_ADMIN lets
// its transparent listeners take TPROXYed connections (IP_TRANSPARENT)
// and its upstream sockets carry proxyMark (SO_MARK). Its ports are above
// 1024, so it needs no CAP_NET_BIND_SERVICE, and it opens no raw socket.
// Waypoints, gateways and sidecars keep none.
var nodeProxyCaps = []string{"net_admin"}

// buildNodeProxy builds the per-node proxy in ztunnel's role, at L4 only:
//   - 15001 takes the node's captured outbound connections; a filter
//     chain per (local pod, Service) picks an endpoint of the Service (or
//     the namespace's waypoint) and tunnels to it over HBONE presenting
//     that SOURCE POD's certificate, not the node's; connections straight
//     to a meshed pod's IP are tunnelled the same way;
//   - 15008 terminates HBONE for local pods, presenting the destination
//     pod's certificate, enforcing L4 policy on the peer's identity, and
//     delivers to the pod;
//   - 15006 takes plaintext sent to local pods and refuses it (STRICT).
//
// waypoints maps a namespace to its waypoint pods.
func buildNodeProxy(v *view, node *Node, s Settings, dir string, waypoints map[string][]*Pod, l4 bool) *proxy {
	nodeID := fmt.Sprintf("ztunnel~%s~ztunnel-%s.%s~%s.svc.cluster.local", node.IP, node.Name, systemNamespace, systemNamespace)
	p := newProxy("ztunnel/"+node.Name, dir, metrics.RoleNodeProxy, nodeID, "ztunnel", mesh.DefaultNodeProxyWorkers)
	p.Caps = nodeProxyCaps
	p.tunnels()
	local := v.meshedPods(node.Name)
	certs := map[string]envoycfg.TLSCertificate{}
	certOf := func(pod *Pod) envoycfg.TLSCertificate {
		c, ok := certs[pod.Key()]
		if !ok {
			c = p.cert(pod.Identity(), "pod-"+pod.Namespace+"_"+pod.Name, ECDSAP256)
			certs[pod.Key()] = c
		}
		return c
	}
	var outChains []envoycfg.FilterChain
	allMeshed := podRanges(v.meshedPods(""))
	for _, src := range local {
		origin := "connect_originate|" + src.Key()
		addConnectOriginate(p, origin, certOf(src), trustDomainPrefix, proxyMark)
		for _, svc := range reachable(v, src) {
			name := src.Key() + "|" + outboundCluster(svc)
			outChains = append(outChains, envoycfg.FilterChain{
				Name: name,
				Match: &envoycfg.FilterChainMatch{
					SourcePrefixRanges: envoycfg.Host(src.IP.String()),
					PrefixRanges:       envoycfg.Host(svc.VIP.String()),
					DestinationPort:    svc.Port,
				},
				Filters: []envoycfg.Extension{envoycfg.TCPProxyFilter(envoycfg.TCPProxy{StatPrefix: outboundCluster(svc), Cluster: name})},
			})
			p.addCluster(tunnelCluster(name, origin, "RANDOM", serviceTargets(v, svc, waypoints[svc.Namespace])))
		}
		// Straight to a meshed pod's address: the destination is the
		// connection's own, handed to connect_originate in filter state.
		direct := src.Key() + "|direct"
		outChains = append(outChains, envoycfg.FilterChain{
			Name:  direct,
			Match: &envoycfg.FilterChainMatch{SourcePrefixRanges: envoycfg.Host(src.IP.String()), PrefixRanges: allMeshed},
			Filters: []envoycfg.Extension{
				envoycfg.NetworkSetFilterState(envoycfg.FilterStateValue{
					ObjectKey: "envoy.filters.listener.original_dst.local_ip", FormatString: envoycfg.Text("%DOWNSTREAM_LOCAL_ADDRESS%"), SharedWithUpstream: "ONCE",
				}),
				envoycfg.TCPProxyFilter(envoycfg.TCPProxy{StatPrefix: direct, Cluster: direct}),
			},
		})
		p.addCluster(envoycfg.Cluster{
			Name: direct, Type: "STATIC", ConnectTimeout: connectTimeout,
			LoadAssignment:  envoycfg.StaticEndpoints(direct, envoycfg.InternalAddr(origin, "")),
			CircuitBreakers: envoycfg.IstioCircuitBreakers(),
			TransportSocket: envoycfg.InternalUpstreamSocket(),
		})
	}
	outChains = append(outChains, passthroughChain())
	p.addCluster(passthroughCluster(proxyMark))
	p.addListener(transparentListener("ztunnel_outbound", portOutbound, outChains))

	var inChains []envoycfg.FilterChain
	for _, dst := range local {
		hosts := []envoycfg.VirtualHost{} // no ports: every CONNECT answers 404
		for _, port := range v.podPorts(dst) {
			name := fmt.Sprintf("inbound|%d||%s", port, dst.Key())
			hosts = append(hosts, envoycfg.VirtualHost{
				Name: name, Domains: []string{hostPort(dst.IP.String(), port)}, Routes: []envoycfg.Route{connectRoute(name)},
			})
			p.addCluster(envoycfg.Cluster{
				Name: name, Type: "STATIC", ConnectTimeout: connectTimeout,
				LoadAssignment:     envoycfg.StaticEndpoints(name, envoycfg.SockAddr(dst.IP.String(), port)),
				CircuitBreakers:    envoycfg.IstioCircuitBreakers(),
				UpstreamBindConfig: proxyMark,
			})
		}
		var filters []envoycfg.Extension
		if l4 {
			filters = append(filters, envoycfg.NetworkRBAC("ztunnel_rbac", podL4Rules(v, dst)))
		}
		filters = append(filters, envoycfg.HCMFilter(connectTerminate(p, "connect_terminate", hosts)))
		inChains = append(inChains, envoycfg.FilterChain{
			Name:            "inbound|" + dst.Key(),
			Match:           &envoycfg.FilterChainMatch{PrefixRanges: envoycfg.Host(dst.IP.String())},
			Filters:         filters,
			TransportSocket: hboneServerTLS(p, certOf(dst)),
		})
	}
	hbone := transparentListener("ztunnel_inbound", portHBONE, inChains)
	hbone.Balance = &envoycfg.BalanceConfig{ExactBalance: &envoycfg.Empty{}}
	p.addListener(hbone)

	// STRICT: plaintext to a meshed pod is accepted, then refused.
	p.addListener(transparentListener("ztunnel_inbound_plaintext", portInbound, []envoycfg.FilterChain{{
		Name: "strict_mtls",
		Filters: []envoycfg.Extension{
			envoycfg.NetworkRBAC("strict_mtls", envoycfg.RBACRules{Action: "ALLOW", Policies: map[string]envoycfg.Policy{}}),
			envoycfg.TCPProxyFilter(envoycfg.TCPProxy{StatPrefix: "BlackHoleCluster", Cluster: "BlackHoleCluster"}),
		},
	}}))
	p.addCluster(envoycfg.Cluster{Name: "BlackHoleCluster", Type: "STATIC", ConnectTimeout: connectTimeout})
	return p
}

// transparentListener accepts TPROXYed connections on a port.
func transparentListener(name string, port int, chains []envoycfg.FilterChain) envoycfg.Listener {
	return envoycfg.Listener{
		Name:            name,
		Address:         envoycfg.SockAddr("0.0.0.0", port),
		Transparent:     envoycfg.Bool(true),
		ListenerFilters: []envoycfg.Extension{envoycfg.OriginalDst()},
		FilterChains:    chains,
	}
}

// reachable are the Services a node proxy configures for a source pod:
// those of the pod's namespace, and every entry Service for a load
// generator. ztunnel needs no such scoping; the lab does it to keep one
// proxy's configuration linear in pods rather than pods times Services.
func reachable(v *view, src *Pod) []*Service {
	out := append([]*Service(nil), v.svcByNS[src.Namespace]...)
	if src.Role == metrics.RoleLoad {
		for i := range v.Services {
			if s := &v.Services[i]; s.Entry && s.Namespace != src.Namespace {
				out = append(out, s)
			}
		}
	}
	return out
}

// serviceTargets are where a Service's traffic goes: its endpoints, or the
// namespace's waypoints with the Service VIP as authority.
func serviceTargets(v *view, svc *Service, waypoints []*Pod) []tunnelTarget {
	var out []tunnelTarget
	if len(waypoints) > 0 {
		for _, w := range waypoints {
			out = append(out, tunnelTarget{Dest: hostPort(svc.VIP.String(), svc.Port), Waypoint: hostPort(w.IP.String(), portHBONE)})
		}
		return out
	}
	for _, ep := range svc.Endpoints {
		if p := v.podByIP[ep.Addr()]; p != nil && meshable(*p) {
			out = append(out, tunnelTarget{Dest: ep.String()})
		}
	}
	return out
}

// podRanges are /32 ranges of pods' addresses, sorted.
func podRanges(pods []*Pod) []envoycfg.CidrRange {
	var ips []netip.Addr
	for _, p := range pods {
		ips = append(ips, p.IP)
	}
	sort.Slice(ips, func(i, j int) bool { return ips[i].Less(ips[j]) })
	var out []envoycfg.CidrRange
	for _, ip := range ips {
		out = append(out, envoycfg.Host(ip.String())...)
	}
	return out
}

// podL4Rules is the L4 policy of a destination pod: the union of what its
// Services allow, enforced by the destination ztunnel.
func podL4Rules(v *view, dst *Pod) envoycfg.RBACRules {
	svcs := v.servicesOf(dst)
	seen := map[string]bool{}
	var ids []string
	var names []string
	for _, s := range svcs {
		names = append(names, s.Name)
		for _, id := range v.allowedPrincipals(s) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return l4Rules(&Service{Namespace: dst.Namespace, Name: strings.Join(names, "+")}, ids)
}
