package dataplane

import (
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// HBONE in Envoy, as Istio builds it for waypoints: a cluster picks an
// endpoint, which is the internal listener connect_originate with the
// real destination in the endpoint's metadata; that listener restores the
// destination (original_dst filter) and tunnels the connection in an
// HTTP/2 CONNECT to <destination>:15008 over mutual TLS, the CONNECT's
// authority being the destination. A "waypoint" entry in the metadata
// sends the tunnel to the waypoint instead, authority unchanged.

// originalDstKey is the metadata namespace the original_dst listener
// filter reads on internal listeners.
const originalDstKey = "envoy.filters.listener.original_dst"

// tunnelTarget is one endpoint reached over HBONE.
type tunnelTarget struct {
	Dest     string // ip:port, the CONNECT authority
	Waypoint string // ip:15008 of a waypoint to go through, or ""
}

// tunnelCluster balances over targets, each reached through the internal
// listener named via.
func tunnelCluster(name, via, lb string, targets []tunnelTarget) envoycfg.Cluster {
	la := &envoycfg.LoadAssignment{ClusterName: name, Endpoints: []envoycfg.LocalityLbEndpoint{{LbEndpoints: []envoycfg.LbEndpoint{}}}}
	for _, t := range targets {
		md := map[string]any{"local": t.Dest}
		id := t.Dest
		if t.Waypoint != "" {
			md["waypoint"] = t.Waypoint
			id = t.Waypoint
		}
		la.Endpoints[0].LbEndpoints = append(la.Endpoints[0].LbEndpoints, envoycfg.LbEndpoint{
			Endpoint: envoycfg.Endpoint{Address: envoycfg.InternalAddr(via, id)},
			Metadata: &envoycfg.Metadata{FilterMetadata: map[string]map[string]any{originalDstKey: md}},
		})
	}
	return envoycfg.Cluster{
		Name: name, Type: "STATIC", LbPolicy: lb, ConnectTimeout: connectTimeout,
		LoadAssignment:  la,
		CircuitBreakers: envoycfg.IstioCircuitBreakers(),
		TransportSocket: envoycfg.InternalUpstreamSocket(originalDstKey),
	}
}

// addConnectOriginate adds the internal listener and the ORIGINAL_DST
// cluster, both named name, that open HBONE tunnels presenting cert and
// accepting peers whose identity starts with peerPrefix.
func addConnectOriginate(p *proxy, name string, cert envoycfg.TLSCertificate, peerPrefix string, bind *envoycfg.BindConfig) {
	p.addListener(envoycfg.Listener{
		Name:             name,
		InternalListener: &envoycfg.Empty{},
		UseOriginalDst:   envoycfg.Bool(false),
		ListenerFilters:  []envoycfg.Extension{envoycfg.OriginalDst()},
		FilterChains: []envoycfg.FilterChain{{Filters: []envoycfg.Extension{envoycfg.TCPProxyFilter(envoycfg.TCPProxy{
			StatPrefix: name, Cluster: name,
			Tunneling: &envoycfg.TunnelingConfig{Hostname: "%DOWNSTREAM_LOCAL_ADDRESS%"},
		})}}},
	})
	p.addCluster(envoycfg.Cluster{
		Name: name, Type: "ORIGINAL_DST", LbPolicy: "CLUSTER_PROVIDED",
		ConnectTimeout: connectTimeout, CleanupInterval: cleanupInterval,
		CircuitBreakers: envoycfg.IstioCircuitBreakers(),
		ProtocolOptions: envoycfg.HTTP2Options(),
		OriginalDstLbConfig: &envoycfg.OriginalDstLbConfig{
			UpstreamPortOverride: portHBONE,
			MetadataKey:          &envoycfg.MetadataKey{Key: originalDstKey, Path: []envoycfg.MetadataSegment{{Key: "waypoint"}}},
		},
		TransportSocket: envoycfg.UpstreamTLSSocket(envoycfg.UpstreamTLS{Common: envoycfg.CommonTLS{
			TLSParams:         tlsParams("TLSv1_3"),
			TLSCertificates:   []envoycfg.TLSCertificate{cert},
			ValidationContext: &envoycfg.ValidationContext{TrustedCA: p.trustedCA(), MatchSANs: []envoycfg.SANMatcher{envoycfg.URIPrefix(peerPrefix)}},
			ALPNProtocols:     []string{"h2"},
		}}),
		UpstreamBindConfig: bind,
	})
}

// hboneServerTLS is the server side of HBONE: TLS 1.3, h2, a client
// certificate from the trust domain required.
func hboneServerTLS(p *proxy, cert envoycfg.TLSCertificate) *envoycfg.Extension {
	return envoycfg.DownstreamTLSSocket(strictTLS(cert, p.trustedCA(), "TLSv1_3", []string{"h2"}))
}

// connectTerminate is the HTTP connection manager that accepts HBONE
// CONNECT streams and can log each with the peer's identity, at its start
// too: a waypoint's pooled HTTP/1.1 connections keep their tunnels open
// indefinitely. ztunnel and waypoints log every connection; here the log
// starts on, so that the tunnels install's settling and verification open
// (which later probes ride) are logged, and Install turns it off after
// verifying unless Settings.AccessLog, since without keep-alive it writes
// a line per request, on the measured proxies' CPU; the identity check
// turns it on again while it runs (connectLogKey, through the admin
// runtime layer).
func connectTerminate(p *proxy, statPrefix string, hosts []envoycfg.VirtualHost, filters ...envoycfg.Extension) envoycfg.HCM {
	return envoycfg.HCM{
		StatPrefix:        statPrefix,
		RouteConfig:       envoycfg.RouteConfig{Name: "default", VirtualHosts: hosts, ValidateClusters: envoycfg.Bool(false)},
		HTTPFilters:       append(filters, envoycfg.Router()),
		UseRemoteAddress:  envoycfg.Bool(false),
		StreamIdleTimeout: noTimeout,
		UpgradeConfigs:    []envoycfg.UpgradeConfig{{UpgradeType: "CONNECT"}},
		HTTP2ProtocolOptions: map[string]any{
			"allow_connect":          true,
			"max_concurrent_streams": 100,
		},
		AccessLogOptions: &envoycfg.AccessLogOptions{FlushOnNewRequest: true},
		AccessLog: []envoycfg.AccessLog{envoycfg.FileLog(p.path(connLogFile),
			"%START_TIME% src=%DOWNSTREAM_REMOTE_ADDRESS% peer=%DOWNSTREAM_PEER_URI_SAN% local=%DOWNSTREAM_LOCAL_URI_SAN% authority=%REQ(:AUTHORITY)% code=%RESPONSE_CODE% flags=%RESPONSE_FLAGS% bytes=%BYTES_RECEIVED%/%BYTES_SENT% duration=%DURATION%\n",
			&envoycfg.AccessLogFilter{RuntimeFilter: &envoycfg.RuntimeFilter{RuntimeKey: connectLogKey,
				PercentSampled: envoycfg.Percent{Numerator: 100, Denominator: "HUNDRED"}}})},
	}
}

// connectRoute accepts CONNECT to one authority and forwards the stream's
// bytes to cluster.
func connectRoute(cluster string) envoycfg.Route {
	return envoycfg.Route{
		Match: envoycfg.RouteMatch{ConnectMatcher: &envoycfg.Empty{}},
		Route: &envoycfg.RouteAct{Cluster: cluster, UpgradeConfigs: []envoycfg.UpgradeConfig{{UpgradeType: "CONNECT", ConnectConfig: &envoycfg.Empty{}}}},
	}
}
