package dataplane

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

func findCluster(p *proxy, name string) *envoycfg.Cluster {
	for i := range p.Boot.StaticResources.Clusters {
		if p.Boot.StaticResources.Clusters[i].Name == name {
			return &p.Boot.StaticResources.Clusters[i]
		}
	}
	return nil
}

func findListener(p *proxy, name string) *envoycfg.Listener {
	for i := range p.Boot.StaticResources.Listeners {
		if p.Boot.StaticResources.Listeners[i].Name == name {
			return &p.Boot.StaticResources.Listeners[i]
		}
	}
	return nil
}

// identityOf is the identity a proxy's certificate files carry.
func identityOf(p *proxy, cert envoycfg.TLSCertificate) string {
	for _, c := range p.Certs {
		if c.CertPath == cert.CertificateChain.Filename {
			return c.Identity
		}
	}
	return ""
}

func TestSidecarConfig(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	pod := podNamed(&inv, "tier-2-app-a-0")
	p := buildSidecar(v, pod, Settings{Workers: 2}, "/m/sidecar", false)
	if p.UID != proxyUID || p.Workers != 2 {
		t.Errorf("uid %d workers %d", p.UID, p.Workers)
	}
	if len(p.Certs) != 1 || p.Certs[0].Identity != SPIFFEID("ns-1", "tier-2-app-a") || p.Certs[0].Key != RSA2048 {
		t.Errorf("certs %+v", p.Certs)
	}
	c := findCluster(p, "outbound|8080||tier-3-app-a.ns-1.svc.cluster.local")
	if c == nil {
		t.Fatal("no outbound cluster for tier-3")
	}
	tlsCtx := c.TransportSocket.TypedConfig.Value.(envoycfg.UpstreamTLS)
	if tlsCtx.SNI != "outbound_.8080_._.tier-3-app-a.ns-1.svc.cluster.local" {
		t.Errorf("SNI %q", tlsCtx.SNI)
	}
	if sans := tlsCtx.Common.ValidationContext.MatchSANs; len(sans) != 1 || sans[0].Matcher.Exact != SPIFFEID("ns-1", "tier-3-app-a") {
		t.Errorf("SANs %+v", sans)
	}
	if ep := c.LoadAssignment.Endpoints[0].LbEndpoints; len(ep) != 1 || ep[0].Endpoint.Address.SocketAddress.Address != "10.244.1.13" {
		t.Errorf("endpoints %+v: the sidecar must balance over pods, not the VIP", ep)
	}
	in := findListener(p, "virtualInbound")
	if in == nil {
		t.Fatal("no virtualInbound")
	}
	for _, ch := range in.FilterChains {
		if ch.Match == nil || ch.Match.TransportProtocol != "tls" {
			t.Errorf("chain %s takes plaintext: STRICT must not", ch.Name)
		}
		if dt := ch.TransportSocket.TypedConfig.Value.(envoycfg.DownstreamTLS); !dt.RequireClientCertificate {
			t.Errorf("chain %s does not require a client certificate", ch.Name)
		}
	}
	if out := findListener(p, "virtualOutbound"); out == nil || out.UseOriginalDst == nil || !*out.UseOriginalDst {
		t.Error("virtualOutbound does not hand off by original destination")
	}
	hosts := findListener(p, "0.0.0.0_8080").FilterChains[0].Filters[0].TypedConfig.Value.(envoycfg.HCM).RouteConfig.VirtualHosts
	if !slices.ContainsFunc(hosts, func(h envoycfg.VirtualHost) bool { return slices.Contains(h.Domains, "10.96.0.13:8080") }) {
		t.Error("no virtual host answers the Service VIP the app dials")
	}

	l7 := buildSidecar(v, pod, Settings{Workers: 2}, "/m/sidecar", true)
	h := findListener(l7, "virtualInbound").FilterChains[0].Filters[0].TypedConfig.Value.(envoycfg.HCM)
	if len(h.HTTPFilters) != 2 || h.HTTPFilters[0].Name != "envoy.filters.http.rbac" {
		t.Fatalf("L7 filters %+v", h.HTTPFilters)
	}
	rules := h.HTTPFilters[0].TypedConfig.Value.(map[string]any)["rules"].(envoycfg.RBACRules)
	pol := rules.Policies[policyName(v.service("ns-1", "tier-2-app-a"))]
	if len(pol.Principals) != 1 || pol.Principals[0].Authenticated.PrincipalName.Exact != SPIFFEID("ns-1", "tier-1-app-a") {
		t.Errorf("principals %+v", pol.Principals)
	}
}

func TestNodeProxyUsesEachSourcePodsIdentity(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	p := buildNodeProxy(v, &inv.Nodes[0], Settings{}, "/m/ztunnel", nil, false)
	if p.UID != ProxyUID || !slices.Equal(p.Caps, []string{"net_admin"}) {
		t.Errorf("the node proxy runs as %d keeping %q, want %d keeping only net_admin (TPROXY and SO_MARK)", p.UID, p.Caps, ProxyUID)
	}
	out := findListener(p, "ztunnel_outbound")
	if out == nil || out.Transparent == nil || !*out.Transparent {
		t.Fatal("no transparent outbound listener")
	}
	chains := 0
	for _, ch := range out.FilterChains {
		if ch.Match == nil {
			continue // passthrough
		}
		chains++
		src := ch.Match.SourcePrefixRanges[0].AddressPrefix
		pod := v.podByIP[netip.MustParseAddr(src)]
		tcp := ch.Filters[len(ch.Filters)-1].TypedConfig.Value.(envoycfg.TCPProxy)
		c := findCluster(p, tcp.Cluster)
		if c == nil {
			t.Fatalf("chain %s: no cluster %s", ch.Name, tcp.Cluster)
		}
		via := c.LoadAssignment.Endpoints[0].LbEndpoints[0].Endpoint.Address.EnvoyInternalAddress.ServerListenerName
		origin := findCluster(p, via)
		cert := origin.TransportSocket.TypedConfig.Value.(envoycfg.UpstreamTLS).Common.TLSCertificates[0]
		if got := identityOf(p, cert); got != pod.Identity() {
			t.Errorf("chain %s tunnels with %q, want the source pod's %q", ch.Name, got, pod.Identity())
		}
		if c.LoadAssignment.Endpoints[0].LbEndpoints[0].Metadata != nil {
			md := c.LoadAssignment.Endpoints[0].LbEndpoints[0].Metadata.FilterMetadata[originalDstKey]
			if !strings.HasSuffix(md["local"].(string), ":8080") {
				t.Errorf("chain %s: destination %v", ch.Name, md)
			}
		}
	}
	// 4 local pods x (4 Services of their namespace + straight to pods).
	if chains != 4*5 {
		t.Errorf("%d outbound chains, want 20", chains)
	}
	for _, c := range p.Certs {
		if c.Key != ECDSAP256 {
			t.Errorf("%s: ztunnel certificates are ECDSA P-256", c.Identity)
		}
	}
	strict := findListener(p, "ztunnel_inbound_plaintext").FilterChains[0].Filters[0].TypedConfig.Value.(map[string]any)["rules"].(envoycfg.RBACRules)
	if strict.Action != "ALLOW" || len(strict.Policies) != 0 {
		t.Errorf("plaintext is not refused: %+v", strict)
	}
}

func TestNodeProxyPolicyAndWaypoints(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	wp := &Pod{Namespace: "ns-1", Name: "waypoint-0", IP: netip.MustParseAddr("10.244.1.99")}
	p := buildNodeProxy(v, &inv.Nodes[0], Settings{}, "/m/ztunnel", map[string][]*Pod{"ns-1": {wp}}, true)
	for _, ch := range findListener(p, "ztunnel_inbound").FilterChains {
		if ch.Filters[0].Name != "envoy.filters.network.rbac" {
			t.Errorf("chain %s: L4 policy is not enforced before the tunnel ends", ch.Name)
		}
	}
	c := findCluster(p, "ns-1/tier-1-app-a-0|outbound|8080||tier-2-app-a.ns-1.svc.cluster.local")
	md := c.LoadAssignment.Endpoints[0].LbEndpoints[0].Metadata.FilterMetadata[originalDstKey]
	if md["waypoint"] != "10.244.1.99:15008" || md["local"] != "10.96.0.11:8080" {
		t.Errorf("service traffic does not go to the waypoint with the VIP as authority: %v", md)
	}
}

func TestIngressModes(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	name := "outbound|8080||tier-1-app-a.ns-1.svc.cluster.local"
	tests := []struct {
		name  string
		mode  upstreamMode
		check func(*proxy, *envoycfg.Cluster) string
	}{
		{name: "baseline plain", mode: plainUpstream, check: func(_ *proxy, c *envoycfg.Cluster) string {
			if c.TransportSocket != nil {
				return "TLS in baseline"
			}
			return ""
		}},
		{name: "sidecar mTLS", mode: mtlsUpstream, check: func(p *proxy, c *envoycfg.Cluster) string {
			cert := c.TransportSocket.TypedConfig.Value.(envoycfg.UpstreamTLS).Common.TLSCertificates[0]
			if identityOf(p, cert) != ingressIdentity {
				return "not the gateway's identity"
			}
			return ""
		}},
		{name: "ambient HBONE", mode: hboneUpstream, check: func(p *proxy, c *envoycfg.Cluster) string {
			if findListener(p, "connect_originate") == nil || c.TransportSocket.Name != "envoy.transport_sockets.internal_upstream" {
				return "no HBONE origination"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := buildIngress(v, &inv.Nodes[2], Settings{Workers: 2}, "/m/ingress", tt.mode)
			c := findCluster(p, name)
			if c == nil {
				t.Fatal("no cluster for the entry")
			}
			if bad := tt.check(p, c); bad != "" {
				t.Error(bad)
			}
		})
	}
}

// TestHTTPClustersKeepTheCallersProtocol: every proxy that routes HTTP
// (sidecar in and out, waypoint, ingress) sends each request upstream in
// the protocol it came in, so that gRPC and h2c stay HTTP/2 end to end
// and HTTP/1.1 stays HTTP/1.1.
func TestHTTPClustersKeepTheCallersProtocol(t *testing.T) {
	t.Parallel()
	inv := fixture()
	v := newView(inv)
	pod := podNamed(&inv, "tier-2-app-a-0")
	sidecar := buildSidecar(v, pod, Settings{Workers: 2}, "/m/sidecar", false)
	waypoint := buildWaypoint(v, "ns-1", "waypoint-0", Settings{Workers: 2}, "/m/waypoint", false)
	tests := []struct {
		name    string
		p       *proxy
		cluster string
	}{
		{"sidecar outbound", sidecar, "outbound|8080||tier-3-app-a.ns-1.svc.cluster.local"},
		{"sidecar inbound", sidecar, "inbound|8080||"},
		{"waypoint", waypoint, "inbound-vip|8080|http|tier-2-app-a.ns-1.svc.cluster.local"},
	}
	for _, mode := range []upstreamMode{plainUpstream, mtlsUpstream, hboneUpstream} {
		tests = append(tests, struct {
			name    string
			p       *proxy
			cluster string
		}{fmt.Sprintf("ingress mode %d", mode), buildIngress(v, &inv.Nodes[0], Settings{Workers: 1}, "/m/ingress", mode), "outbound|8080||tier-1-app-a.ns-1.svc.cluster.local"})
	}
	for _, tt := range tests {
		c := findCluster(tt.p, tt.cluster)
		if c == nil {
			t.Errorf("%s: no cluster %s", tt.name, tt.cluster)
			continue
		}
		opts, ok := c.ProtocolOptions["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].Value.(map[string]any)
		down, _ := opts["use_downstream_protocol_config"].(map[string]any)
		if !ok || down["http2_protocol_options"] == nil || down["http_protocol_options"] == nil {
			t.Errorf("%s: cluster %s options %v; want use_downstream_protocol_config with HTTP/1.1 and HTTP/2", tt.name, tt.cluster, c.ProtocolOptions)
		}
	}
}
