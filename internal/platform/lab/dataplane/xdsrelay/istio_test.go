package xdsrelay

import (
	"testing"

	xdstype "github.com/cncf/xds/go/xds/type/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	sfsvalue "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/set_filter_state/v3"
	sfs "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/set_filter_state/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
)

// Resources shaped as istiod (istio.io/istio@v0.0.0-20260827124520-eed52ebb66ad,
// pilot/pkg/xds/filters and pilot/pkg/model/telemetry.go) builds them, with
// the type URLs and filter names it uses.

const (
	peerMetadataType = "type.googleapis.com/io.istio.http.peer_metadata.Config"
	tcpMxType        = "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange"
	hboneUpstreamMx  = "type.googleapis.com/envoy.extensions.network_filters.peer_metadata.UpstreamConfig"
	alpnType         = "type.googleapis.com/istio.envoy.config.filter.http.alpn.v2alpha1.FilterConfig"
	statsType        = "type.googleapis.com/stats.PluginConfig"
)

func mustAny(t testing.TB, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// typedStruct is how istiod carries configs it has no Go type for.
func typedStruct(t testing.TB, typeURL string, fields map[string]any) *anypb.Any {
	t.Helper()
	v, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	return mustAny(t, &xdstype.TypedStruct{TypeUrl: typeURL, Value: v})
}

// opaque is a typed config whose message is istio-proxy's own (compiled
// into istiod, unknown here): only its type URL matters.
func opaque(typeURL string) *anypb.Any {
	return &anypb.Any{TypeUrl: typeURL, Value: []byte{0x08, 0x01}}
}

func httpFilter(name string, cfg *anypb.Any) *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: name, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: cfg}}
}

func netFilter(name string, cfg *anypb.Any) *listener.Filter {
	return &listener.Filter{Name: name, ConfigType: &listener.Filter_TypedConfig{TypedConfig: cfg}}
}

// sidecarInbound is a sidecar's virtualInbound listener: TCP metadata
// exchange ahead of the HTTP connection manager, whose chain has peer
// metadata, the ALPN override, istio.stats, a set_filter_state with
// istio.hashable_string and the router.
func sidecarInbound(t testing.TB) *listener.Listener {
	conn := &hcm.HttpConnectionManager{
		StatPrefix: "inbound_0.0.0.0_8080",
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: &route.RouteConfiguration{
			Name: "inbound|8080||",
			VirtualHosts: []*route.VirtualHost{{
				Name: "inbound|http|8080", Domains: []string{"*"},
				Routes: []*route.Route{{
					Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
					Action: &route.Route_Route{Route: &route.RouteAction{ClusterSpecifier: &route.RouteAction_Cluster{Cluster: "inbound|8080||"}}},
				}},
			}},
		}},
		HttpFilters: []*hcm.HttpFilter{
			httpFilter("istio.metadata_exchange", typedStruct(t, peerMetadataType, map[string]any{"downstream_discovery": []any{}})),
			httpFilter("istio.alpn", opaque(alpnType)),
			httpFilter("connect_authority", mustAny(t, &sfs.Config{OnRequestHeaders: []*sfsvalue.FilterStateValue{{
				Key:        &sfsvalue.FilterStateValue_ObjectKey{ObjectKey: "io.istio.connect_authority"},
				FactoryKey: "istio.hashable_string",
				Value: &sfsvalue.FilterStateValue_FormatString{FormatString: &core.SubstitutionFormatString{
					Format: &core.SubstitutionFormatString_TextFormatSource{TextFormatSource: &core.DataSource{
						Specifier: &core.DataSource_InlineString{InlineString: "%REQ(:AUTHORITY)%"}}}}},
				SharedWithUpstream: sfsvalue.FilterStateValue_ONCE,
			}}})),
			httpFilter("istio.stats", opaque(statsType)),
			httpFilter("envoy.filters.http.router", mustAny(t, &router.Router{})),
		},
	}
	return &listener.Listener{
		Name: "virtualInbound",
		FilterChains: []*listener.FilterChain{{
			Name:             "0.0.0.0_8080",
			FilterChainMatch: &listener.FilterChainMatch{DestinationPort: wrapperspb.UInt32(8080)},
			Filters: []*listener.Filter{
				netFilter("istio.metadata_exchange", typedStruct(t, tcpMxType, map[string]any{"protocol": "istio-peer-exchange"})),
				netFilter("envoy.filters.network.http_connection_manager", mustAny(t, conn)),
			},
		}, {
			Name: "inbound-catch-all",
			Filters: []*listener.Filter{
				netFilter("envoy.filters.network.tcp_proxy", mustAny(t, &tcpproxy.TcpProxy{StatPrefix: "InboundPassthroughCluster",
					ClusterSpecifier: &tcpproxy.TcpProxy_Cluster{Cluster: "InboundPassthroughCluster"}})),
			},
		}},
	}
}

// outboundCluster has the upstream pieces: TCP metadata exchange as a
// cluster filter and HBONE peer metadata as an upstream HTTP filter.
func outboundCluster(t testing.TB) *cluster.Cluster {
	opts := &upstreamhttp.HttpProtocolOptions{
		HttpFilters: []*hcm.HttpFilter{
			httpFilter("istio.metadata_exchange", typedStruct(t, peerMetadataType, map[string]any{})),
			httpFilter("envoy.filters.http.upstream_codec", &anypb.Any{TypeUrl: "type.googleapis.com/envoy.extensions.filters.http.upstream_codec.v3.UpstreamCodec"}),
		},
	}
	return &cluster.Cluster{
		Name: "outbound|8080||api.shop.svc.cluster.local",
		Filters: []*cluster.Filter{
			{Name: "istio.metadata_exchange", TypedConfig: typedStruct(t, tcpMxType, map[string]any{})},
			{Name: "envoy.extensions.network_filters.peer_metadata", TypedConfig: typedStruct(t, hboneUpstreamMx, map[string]any{})},
		},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(t, opts),
		},
	}
}

func TestScrubSidecarListener(t *testing.T) {
	in := mustAny(t, sidecarInbound(t))
	out, changes, err := Scrub(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Resource: "virtualInbound", Extension: "istio.metadata_exchange", Type: tcpMxType, Action: Removed},
		{Resource: "virtualInbound", Extension: "istio.metadata_exchange", Type: peerMetadataType, Action: Optional},
		{Resource: "virtualInbound", Extension: "istio.alpn", Type: alpnType, Action: Optional},
		{Resource: "virtualInbound", Extension: "istio.hashable_string", Type: "envoy.extensions.filters.common.set_filter_state.v3.FilterStateValue", Action: Renamed},
		{Resource: "virtualInbound", Extension: "istio.stats", Type: statsType, Action: Optional},
	}
	checkChanges(t, changes, want, "type.googleapis.com/envoy.config.listener.v3.Listener")

	var l listener.Listener
	if err := out.UnmarshalTo(&l); err != nil {
		t.Fatal(err)
	}
	fs := l.GetFilterChains()[0].GetFilters()
	if len(fs) != 1 || fs[0].GetName() != "envoy.filters.network.http_connection_manager" {
		t.Fatalf("network filters after scrub: %v", fs)
	}
	var conn hcm.HttpConnectionManager
	if err := fs[0].GetTypedConfig().UnmarshalTo(&conn); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range conn.GetHttpFilters() {
		names = append(names, f.GetName())
		if IstioOnly(effectiveType(f.GetTypedConfig())) != f.GetIsOptional() {
			t.Errorf("filter %s: optional %v", f.GetName(), f.GetIsOptional())
		}
	}
	if len(names) != 5 || names[4] != "envoy.filters.http.router" {
		t.Errorf("http filters after scrub: %v (every one kept, router last)", names)
	}
	var sf sfs.Config
	if err := conn.GetHttpFilters()[2].GetTypedConfig().UnmarshalTo(&sf); err != nil {
		t.Fatal(err)
	}
	if k := sf.GetOnRequestHeaders()[0].GetFactoryKey(); k != "envoy.hashable_string" {
		t.Errorf("factory key %q, want envoy.hashable_string", k)
	}
	if !proto.Equal(l.GetFilterChains()[1], sidecarInbound(t).GetFilterChains()[1]) {
		t.Error("the catch-all chain, which has nothing Istio-only, changed")
	}

	// A second pass finds nothing left to change.
	if _, again, err := Scrub(out); err != nil || len(again) != 0 {
		t.Errorf("second scrub: %v, %v", again, err)
	}
}

func TestScrubCluster(t *testing.T) {
	out, changes, err := Scrub(mustAny(t, outboundCluster(t)))
	if err != nil {
		t.Fatal(err)
	}
	name := "outbound|8080||api.shop.svc.cluster.local"
	checkChanges(t, changes, []Change{
		{Resource: name, Extension: "istio.metadata_exchange", Type: peerMetadataType, Action: Optional},
		{Resource: name, Extension: "istio.metadata_exchange", Type: tcpMxType, Action: Removed},
		{Resource: name, Extension: "envoy.extensions.network_filters.peer_metadata", Type: hboneUpstreamMx, Action: Removed},
	}, "type.googleapis.com/envoy.config.cluster.v3.Cluster")
	var c cluster.Cluster
	if err := out.UnmarshalTo(&c); err != nil {
		t.Fatal(err)
	}
	if len(c.GetFilters()) != 0 {
		t.Errorf("cluster filters left: %v", c.GetFilters())
	}
	var opts upstreamhttp.HttpProtocolOptions
	if err := c.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].UnmarshalTo(&opts); err != nil {
		t.Fatal(err)
	}
	if f := opts.GetHttpFilters(); len(f) != 2 || !f[0].GetIsOptional() || f[1].GetIsOptional() {
		t.Errorf("upstream filters: %v", f)
	}
}

func TestScrubLeavesUpstreamConfigAlone(t *testing.T) {
	c := &cluster.Cluster{
		Name:            "BlackHoleCluster",
		TransportSocket: &core.TransportSocket{Name: "envoy.transport_sockets.raw_buffer", ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer"}}},
	}
	in := mustAny(t, c)
	out, changes, err := Scrub(in)
	if err != nil || len(changes) != 0 || out != in {
		t.Errorf("scrub of an upstream-only cluster: %v, %v, same resource %v", changes, err, out == in)
	}
	if _, _, err := Scrub(&anypb.Any{TypeUrl: in.GetTypeUrl(), Value: []byte{0xff}}); err == nil {
		t.Error("a resource that does not decode: no error")
	}
}

func TestIstioOnly(t *testing.T) {
	for typ, want := range map[string]bool{
		"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router": false,
		"type.googleapis.com/xds.type.v3.TypedStruct":                        false,
		"type.googleapis.com/google.protobuf.Struct":                         false,
		peerMetadataType: true, tcpMxType: true, hboneUpstreamMx: true, alpnType: true, statsType: true,
		"type.googleapis.com/envoy.extensions.network_filters.peer_metadata.Config": true,
	} {
		if got := IstioOnly(typ); got != want {
			t.Errorf("IstioOnly(%s) = %v", typ, got)
		}
	}
}

func checkChanges(t *testing.T, got, want []Change, resType string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("changes:\n%v\nwant:\n%v", got, want)
	}
	for i := range want {
		want[i].ResourceType = resType
		if got[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
