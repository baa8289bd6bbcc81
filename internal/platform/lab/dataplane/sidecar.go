package dataplane

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// probeHeader marks the verification's own requests, which a sidecar's
// inbound side logs with the peer's certificate identity. Requests
// without it are not logged (Istio's access log is off by default).
const probeHeader = "x-meshbench-probe"

// probeLogFormat is a probe log line (without its newline): the probe's
// nonce, the peer's and the proxy's own certificate identity, the status.
const probeLogFormat = "probe=%REQ(" + probeHeader + ")% peer=%DOWNSTREAM_PEER_URI_SAN% local=%DOWNSTREAM_LOCAL_URI_SAN% code=%RESPONSE_CODE%"

// sidecarProxy builds the Envoy Istio injects into a pod: virtualOutbound
// (15001) handing captured connections to per-port HTTP listeners that
// route by Host to per-Service clusters of the Services' endpoints over
// mutual TLS; virtualInbound (15006) accepting only mutual TLS (STRICT)
// and forwarding to the app from 127.0.0.6.
func buildSidecar(v *view, pod *Pod, s Settings, dir string, l7 bool) *proxy {
	nodeID := fmt.Sprintf("sidecar~%s~%s.%s~%s.svc.cluster.local", pod.IP, pod.Name, pod.Namespace, pod.Namespace)
	p := newProxy("sidecar/"+pod.Namespace+"/"+pod.Name, dir, metrics.RoleSidecar, nodeID, pod.Namespace, s.Workers)
	cert := p.cert(pod.Identity(), "workload", RSA2048)
	addOutbound(p, v, pod.Namespace, cert, p.trustedCA(), nil)
	addSidecarInbound(p, v, pod, cert, l7, s.InjectedWork)
	return p
}

// injectedWork is the Lua filter that makes a sidecar spend CPU on every
// request it receives: a loop of n iterations whose sum goes into the
// request's dynamic metadata, so that no compiler can drop it.
func injectedWork(n int) envoycfg.Extension {
	return envoycfg.Lua(fmt.Sprintf(`function envoy_on_request(h)
  local x = 0
  for i = 1, %d do x = (x + i) %% 1000003 end
  h:streamInfo():dynamicMetadata():set("meshbench", "injected_work", x)
end
`, n))
}

// addSidecarInbound adds virtualInbound: per app port a filter chain that
// requires TLS with a client certificate of the trust domain (STRICT;
// plaintext matches no chain and is closed), an HTTP connection manager
// with Istio's XFCC settings, optionally the injected work and the L7
// policy, and the inbound cluster to the app from 127.0.0.6.
func addSidecarInbound(p *proxy, v *view, pod *Pod, cert envoycfg.TLSCertificate, l7 bool, work int) {
	var chains []envoycfg.FilterChain
	for _, port := range v.podPorts(pod) {
		name := fmt.Sprintf("inbound|%d||", port)
		filters := []envoycfg.Extension{}
		if work > 0 {
			filters = append(filters, injectedWork(work))
		}
		if l7 {
			for _, s := range v.servicesOf(pod) {
				if portOf(s, pod) == port {
					filters = append(filters, envoycfg.HTTPRBAC(l7Rules(s, v.allowedPrincipals(s), false)))
				}
			}
		}
		filters = append(filters, envoycfg.Router())
		h := istioHCM(fmt.Sprintf("inbound_0.0.0.0_%d", port), envoycfg.RouteConfig{
			Name: name, ValidateClusters: envoycfg.Bool(false),
			VirtualHosts: []envoycfg.VirtualHost{{
				Name: fmt.Sprintf("inbound|http|%d", port), Domains: []string{"*"},
				Routes: []envoycfg.Route{{Name: "default", Match: envoycfg.RouteMatch{Prefix: "/"}, Route: &envoycfg.RouteAct{Cluster: name, Timeout: noTimeout}}},
			}},
		}, filters...)
		h.ForwardClientCertDetails = "APPEND_FORWARD"
		h.SetCurrentClientCertDetails = &envoycfg.ClientCertDetail{Subject: true, URI: true, DNS: true}
		h.AccessLog = []envoycfg.AccessLog{envoycfg.FileLog(p.path(probeLogFile), probeLogFormat+"\n",
			&envoycfg.AccessLogFilter{HeaderFilter: &envoycfg.HeaderFilter{Header: envoycfg.HeaderMatcher{Name: probeHeader, PresentMatch: true}}})}
		chains = append(chains, envoycfg.FilterChain{
			Name:            fmt.Sprintf("0.0.0.0_%d", port),
			Match:           &envoycfg.FilterChainMatch{DestinationPort: port, TransportProtocol: "tls"},
			Filters:         []envoycfg.Extension{envoycfg.HCMFilter(h)},
			TransportSocket: envoycfg.DownstreamTLSSocket(strictTLS(cert, p.trustedCA(), "TLSv1_2", []string{"h2", "http/1.1"})),
		})
		p.addCluster(envoycfg.Cluster{
			Name: name, Type: "ORIGINAL_DST", LbPolicy: "CLUSTER_PROVIDED",
			ConnectTimeout: connectTimeout, CleanupInterval: cleanupInterval,
			CircuitBreakers:    envoycfg.IstioCircuitBreakers(),
			ProtocolOptions:    envoycfg.DownstreamProtocolOptions(),
			UpstreamBindConfig: &envoycfg.BindConfig{SourceAddress: &envoycfg.SocketAddress{Address: inboundPassthrough}},
		})
	}
	// Ports no Service names still take mTLS (STRICT), forwarded as TCP,
	// as Istio's inbound passthrough chain does.
	chains = append(chains, envoycfg.FilterChain{
		Name:            "virtualInbound-catchall-tls",
		Match:           &envoycfg.FilterChainMatch{TransportProtocol: "tls"},
		Filters:         []envoycfg.Extension{envoycfg.TCPProxyFilter(envoycfg.TCPProxy{StatPrefix: "InboundPassthroughCluster", Cluster: "InboundPassthroughCluster"})},
		TransportSocket: envoycfg.DownstreamTLSSocket(strictTLS(cert, p.trustedCA(), "TLSv1_2", nil)),
	})
	p.addCluster(envoycfg.Cluster{
		Name: "InboundPassthroughCluster", Type: "ORIGINAL_DST", LbPolicy: "CLUSTER_PROVIDED",
		ConnectTimeout: connectTimeout, CleanupInterval: cleanupInterval,
		CircuitBreakers:    envoycfg.IstioCircuitBreakers(),
		UpstreamBindConfig: &envoycfg.BindConfig{SourceAddress: &envoycfg.SocketAddress{Address: inboundPassthrough}},
	})
	p.addListener(envoycfg.Listener{
		Name:             "virtualInbound",
		Address:          envoycfg.SockAddr("0.0.0.0", portInbound),
		TrafficDirection: "INBOUND",
		ListenerFilters:  []envoycfg.Extension{envoycfg.OriginalDst(), envoycfg.TLSInspector()},
		FilterChains:     chains,
	})
}

// portOf is the target port a Service reaches a pod on, 0 if none.
func portOf(s *Service, pod *Pod) int {
	for _, ep := range s.Endpoints {
		if ep.Addr() == pod.IP {
			return int(ep.Port())
		}
	}
	return 0
}

// strictTLS is a server context requiring a client certificate from the
// mesh's trust domain.
func strictTLS(cert envoycfg.TLSCertificate, ca envoycfg.DataSource, minVersion string, alpn []string) envoycfg.DownstreamTLS {
	return envoycfg.DownstreamTLS{
		RequireClientCertificate: true,
		Common: envoycfg.CommonTLS{
			TLSParams:         tlsParams(minVersion),
			TLSCertificates:   []envoycfg.TLSCertificate{cert},
			ValidationContext: &envoycfg.ValidationContext{TrustedCA: ca, MatchSANs: []envoycfg.SANMatcher{envoycfg.URIPrefix(trustDomainPrefix)}},
			ALPNProtocols:     alpn,
		},
	}
}

// istioHCM is an HTTP connection manager with the settings Istio gives
// sidecar listeners.
func istioHCM(statPrefix string, rc envoycfg.RouteConfig, filters ...envoycfg.Extension) envoycfg.HCM {
	return envoycfg.HCM{
		StatPrefix:             statPrefix,
		RouteConfig:            rc,
		HTTPFilters:            filters,
		UseRemoteAddress:       envoycfg.Bool(false),
		NormalizePath:          envoycfg.Bool(true),
		PathWithEscapedSlashes: "KEEP_UNCHANGED",
		StreamIdleTimeout:      noTimeout,
		ServerName:             "istio-envoy",
	}
}

// tlsParams bound TLS from minVersion to 1.3 with the key exchanges the
// studies' proxies used: Envoy 1.40's BoringSSL would otherwise offer the
// post-quantum hybrid X25519MLKEM768 first, a costlier handshake than
// Istio 1.22's Envoy (X25519, P-256) or ztunnel of that time made.
func tlsParams(minVersion string) *envoycfg.TLSParams {
	return &envoycfg.TLSParams{Min: minVersion, Max: "TLSv1_3", ECDHCurves: []string{"X25519", "P-256"}}
}
