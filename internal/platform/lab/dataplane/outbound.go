package dataplane

import (
	"fmt"
	"sort"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// addOutbound adds virtualOutbound, one HTTP listener per Service port and
// the outbound clusters, for a client in namespace ns. A nil bind leaves
// upstream sockets unmarked.
func addOutbound(p *proxy, v *view, ns string, cert envoycfg.TLSCertificate, ca envoycfg.DataSource, bind *envoycfg.BindConfig) {
	p.addListener(envoycfg.Listener{
		Name:             "virtualOutbound",
		Address:          envoycfg.SockAddr("0.0.0.0", portOutbound),
		UseOriginalDst:   envoycfg.Bool(true),
		TrafficDirection: "OUTBOUND",
		FilterChains:     []envoycfg.FilterChain{passthroughChain()},
	})
	p.addCluster(passthroughCluster(bind))
	byPort := map[int][]*Service{}
	for i := range v.Services {
		s := &v.Services[i]
		byPort[s.Port] = append(byPort[s.Port], s)
	}
	ports := make([]int, 0, len(byPort))
	for port := range byPort {
		ports = append(ports, port)
	}
	sort.Ints(ports)
	for _, port := range ports {
		var hosts []envoycfg.VirtualHost
		for _, s := range byPort[port] {
			name := outboundCluster(s)
			hosts = append(hosts, envoycfg.VirtualHost{
				Name:    s.Host() + ":" + fmt.Sprint(port),
				Domains: serviceDomains(s, ns),
				Routes:  []envoycfg.Route{{Name: "default", Match: envoycfg.RouteMatch{Prefix: "/"}, Route: &envoycfg.RouteAct{Cluster: name, Timeout: noTimeout}}},
			})
			p.addCluster(mtlsCluster(name, v, s, cert, ca, bind))
		}
		hosts = append(hosts, envoycfg.VirtualHost{
			Name: "allow_any", Domains: []string{"*"},
			Routes: []envoycfg.Route{{Name: "allow_any", Match: envoycfg.RouteMatch{Prefix: "/"}, Route: &envoycfg.RouteAct{Cluster: "PassthroughCluster", Timeout: noTimeout}}},
		})
		p.addListener(envoycfg.Listener{
			Name:             fmt.Sprintf("0.0.0.0_%d", port),
			Address:          envoycfg.SockAddr("0.0.0.0", port),
			BindToPort:       envoycfg.Bool(false),
			TrafficDirection: "OUTBOUND",
			FilterChains: []envoycfg.FilterChain{{Filters: []envoycfg.Extension{envoycfg.HCMFilter(istioHCM(
				fmt.Sprintf("outbound_0.0.0.0_%d", port),
				envoycfg.RouteConfig{Name: fmt.Sprint(port), VirtualHosts: hosts, ValidateClusters: envoycfg.Bool(false)},
				envoycfg.Router(),
			))}}},
		})
	}
}

// outboundCluster is Istio's name: outbound|<port>||<host>.
func outboundCluster(s *Service) string { return fmt.Sprintf("outbound|%d||%s", s.Port, s.Host()) }

// serviceDomains are the names a client in namespace ns may put in Host
// for a Service: Istio's long names and the VIP, and the short name only
// within the Service's own namespace (as Kubernetes DNS resolves it, and
// since the same short name exists in every tenant namespace), each with
// and without port.
func serviceDomains(s *Service, ns string) []string {
	names := []string{s.Host(), s.Name + "." + s.Namespace + ".svc", s.Name + "." + s.Namespace, s.VIP.String()}
	if ns == s.Namespace {
		names = append(names, s.Name)
	}
	var out []string
	for _, n := range names {
		out = append(out, n, hostPort(n, s.Port))
	}
	return out
}

// mtlsCluster is an outbound ISTIO_MUTUAL cluster: the Service's endpoints
// (Envoy balances, bypassing the node's Service DNAT, as Istio's EDS
// clusters do), TLS 1.2-1.3 presenting the workload certificate and
// verifying the endpoints' service accounts, SNI as Istio sets it.
func mtlsCluster(name string, v *view, s *Service, cert envoycfg.TLSCertificate, ca envoycfg.DataSource, bind *envoycfg.BindConfig) envoycfg.Cluster {
	var addrs []*envoycfg.Address
	for _, ep := range s.Endpoints {
		addrs = append(addrs, envoycfg.SockAddr(ep.Addr().String(), int(ep.Port())))
	}
	var sans []envoycfg.SANMatcher
	for _, id := range identities(v.backends(s)) {
		sans = append(sans, envoycfg.URIExact(id))
	}
	return envoycfg.Cluster{
		Name: name, Type: "STATIC", LbPolicy: "LEAST_REQUEST", ConnectTimeout: connectTimeout,
		LoadAssignment:  envoycfg.StaticEndpoints(name, addrs...),
		CircuitBreakers: envoycfg.IstioCircuitBreakers(),
		ProtocolOptions: envoycfg.DownstreamProtocolOptions(),
		TransportSocket: envoycfg.UpstreamTLSSocket(envoycfg.UpstreamTLS{
			SNI: fmt.Sprintf("outbound_.%d_._.%s", s.Port, s.Host()), // Istio's DNS SRV form of the cluster name
			Common: envoycfg.CommonTLS{
				TLSParams:         tlsParams("TLSv1_2"),
				TLSCertificates:   []envoycfg.TLSCertificate{cert},
				ValidationContext: &envoycfg.ValidationContext{TrustedCA: ca, MatchSANs: sans},
				ALPNProtocols:     []string{"istio-peer-exchange", "istio"},
			},
		}),
		UpstreamBindConfig: bind,
	}
}
