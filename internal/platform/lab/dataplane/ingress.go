package dataplane

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// ingressPort is the port the gateway listens on, as Istio's gateway pod
// does behind its Service's port 80.
const ingressPort = 8080

// ingressGateway is the running gateway.
type ingressGateway struct {
	proxy *proxy
	addr  netip.AddrPort
}

// upstreamMode is how the gateway reaches workloads in a profile.
type upstreamMode int

const (
	plainUpstream upstreamMode = iota // baseline: plain HTTP to the endpoints
	mtlsUpstream                      // sidecar: Istio mutual TLS to the sidecars
	hboneUpstream                     // ambient: HBONE to the pods' node proxies
)

// buildIngress builds the ingress gateway: HTTP on 8080, routing to each
// namespace's entry Service by Host (its Service names or the namespace
// name) or by the path prefix /<namespace>/ (stripped), balancing itself
// over the endpoints as Istio's gateway does.
func buildIngress(v *view, node *Node, s Settings, dir string, mode upstreamMode) *proxy {
	nodeID := fmt.Sprintf("router~%s~%s.%s~%s.svc.cluster.local", node.IP, ingressName, systemNamespace, systemNamespace)
	p := newProxy("ingress/"+node.Name, dir, metrics.RoleIngress, nodeID, ingressName, s.Workers)
	cert := p.cert(ingressIdentity, "workload", RSA2048)
	if mode == hboneUpstream {
		p.tunnels()
		addConnectOriginate(p, "connect_originate", cert, trustDomainPrefix, nil)
	}
	byPath := envoycfg.VirtualHost{Name: "by-path", Domains: []string{"*"}}
	var hosts []envoycfg.VirtualHost
	for i := range v.Services {
		svc := &v.Services[i]
		if !svc.Entry {
			continue
		}
		name := outboundCluster(svc)
		switch mode {
		case mtlsUpstream:
			p.addCluster(mtlsCluster(name, v, svc, cert, p.trustedCA(), nil))
		case hboneUpstream:
			c := tunnelCluster(name, "connect_originate", "LEAST_REQUEST", serviceTargets(v, svc, nil))
			c.ProtocolOptions = envoycfg.DownstreamProtocolOptions()
			p.addCluster(c)
		default:
			var addrs []*envoycfg.Address
			for _, ep := range svc.Endpoints {
				addrs = append(addrs, envoycfg.SockAddr(ep.Addr().String(), int(ep.Port())))
			}
			p.addCluster(envoycfg.Cluster{
				Name: name, Type: "STATIC", LbPolicy: "LEAST_REQUEST", ConnectTimeout: connectTimeout,
				LoadAssignment: envoycfg.StaticEndpoints(name, addrs...), CircuitBreakers: envoycfg.IstioCircuitBreakers(),
				ProtocolOptions: envoycfg.DownstreamProtocolOptions(),
			})
		}
		byPath.Routes = append(byPath.Routes, envoycfg.Route{
			Name:  svc.Namespace,
			Match: envoycfg.RouteMatch{Prefix: "/" + svc.Namespace + "/"},
			Route: &envoycfg.RouteAct{Cluster: name, Timeout: noTimeout, PrefixRewrite: "/"},
		})
		hosts = append(hosts, envoycfg.VirtualHost{
			Name: svc.Namespace,
			// The gateway sits outside every namespace: no short names.
			Domains: append(serviceDomains(svc, ""), svc.Namespace),
			Routes:  []envoycfg.Route{{Name: svc.Namespace, Match: envoycfg.RouteMatch{Prefix: "/"}, Route: &envoycfg.RouteAct{Cluster: name, Timeout: noTimeout}}},
		})
	}
	h := istioHCM(fmt.Sprintf("outbound_0.0.0.0_%d", ingressPort), envoycfg.RouteConfig{
		Name: fmt.Sprintf("http.%d", ingressPort), VirtualHosts: append(hosts, byPath), ValidateClusters: envoycfg.Bool(false),
	}, envoycfg.Router())
	h.UseRemoteAddress = envoycfg.Bool(true)
	p.addListener(envoycfg.Listener{
		Name:         fmt.Sprintf("0.0.0.0_%d", ingressPort),
		Address:      envoycfg.SockAddr("0.0.0.0", ingressPort),
		FilterChains: []envoycfg.FilterChain{{Filters: []envoycfg.Extension{envoycfg.HCMFilter(h)}}},
	})
	return p
}

// ingressNode is the node the gateway runs on: the ingress node, else the
// mesh node, else (a two-node lab) the load node, never an app node.
func ingressNode(v *view) *Node {
	for _, role := range []infra.NodeRole{infra.NodeIngress, infra.NodeMesh, infra.NodeLoad} {
		for i := range v.Nodes {
			if v.Nodes[i].Role == string(role) {
				return &v.Nodes[i]
			}
		}
	}
	return nil
}

// startIngress runs the gateway on its node's network, as a LoadBalancer
// Service would expose it; without an ingress, mesh or load node there is
// none.
func (in *Installation) startIngress(ctx context.Context) error {
	node := ingressNode(in.inv)
	if node == nil {
		in.o.Logger.Info("no ingress, mesh or load node: no ingress gateway")
		return nil
	}
	p := buildIngress(in.inv, node, in.settings, filepath.Join(in.o.Dir, "ingress", node.Name), in.dp.Upstream())
	spec := PodSpec{Namespace: systemNamespace, Name: ingressName + "-" + node.Name, Node: node.Name, ServiceAccount: ingressAccount,
		HostNetwork: true, Containers: []Container{in.container(p, ingressContainer, in.settings.Ingress)}}
	if _, err := in.addPod(ctx, spec, p); err != nil {
		return err
	}
	in.ingress = &ingressGateway{proxy: p, addr: netip.AddrPortFrom(node.IP, ingressPort)}
	return nil
}

// IngressURL is where load for a namespace enters through the gateway:
// the namespace's path prefix, then path (the graph's entry path).
func (in *Installation) IngressURL(namespace, path string) (string, error) {
	if in.ingress == nil {
		return "", fmt.Errorf("no ingress gateway: the cluster has no ingress, mesh or load node")
	}
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	return fmt.Sprintf("http://%s/%s%s", in.ingress.addr, namespace, path), nil
}
