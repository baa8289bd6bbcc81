package envoycfg

// Cluster is an upstream cluster.
type Cluster struct {
	Name           string          `json:"name"`
	Type           string          `json:"type"` // STATIC, ORIGINAL_DST
	LbPolicy       string          `json:"lb_policy,omitempty"`
	ConnectTimeout string          `json:"connect_timeout,omitempty"`
	LoadAssignment *LoadAssignment `json:"load_assignment,omitempty"`
	// CircuitBreakers: Istio lifts Envoy's default limit of 1024 pending
	// requests and connections, which would otherwise shape saturation.
	CircuitBreakers *CircuitBreakers `json:"circuit_breakers,omitempty"`
	TransportSocket *Extension       `json:"transport_socket,omitempty"`
	// ProtocolOptions holds upstream HTTP options keyed by extension name.
	ProtocolOptions     map[string]Any       `json:"typed_extension_protocol_options,omitempty"`
	OriginalDstLbConfig *OriginalDstLbConfig `json:"original_dst_lb_config,omitempty"`
	UpstreamBindConfig  *BindConfig          `json:"upstream_bind_config,omitempty"`
	CleanupInterval     string               `json:"cleanup_interval,omitempty"`
}

// LoadAssignment lists a cluster's endpoints.
type LoadAssignment struct {
	ClusterName string               `json:"cluster_name"`
	Endpoints   []LocalityLbEndpoint `json:"endpoints"`
}

// LocalityLbEndpoint groups endpoints (one locality in the lab).
type LocalityLbEndpoint struct {
	LbEndpoints []LbEndpoint `json:"lb_endpoints"`
}

// LbEndpoint is one endpoint with optional metadata.
type LbEndpoint struct {
	Endpoint Endpoint  `json:"endpoint"`
	Metadata *Metadata `json:"metadata,omitempty"`
}

// Endpoint is an endpoint's address.
type Endpoint struct {
	Address *Address `json:"address"`
}

// Metadata is filter metadata, keyed by filter name.
type Metadata struct {
	FilterMetadata map[string]map[string]any `json:"filter_metadata"`
}

// CircuitBreakers holds per-priority thresholds.
type CircuitBreakers struct {
	Thresholds []Thresholds `json:"thresholds"`
}

// Thresholds are circuit-breaking limits.
type Thresholds struct {
	MaxConnections     uint32 `json:"max_connections"`
	MaxPendingRequests uint32 `json:"max_pending_requests"`
	MaxRequests        uint32 `json:"max_requests"`
	MaxRetries         uint32 `json:"max_retries"`
	TrackRemaining     bool   `json:"track_remaining"`
}

// IstioCircuitBreakers are Istio's default thresholds: effectively none.
func IstioCircuitBreakers() *CircuitBreakers {
	const maxU32 = 4294967295
	return &CircuitBreakers{Thresholds: []Thresholds{{
		MaxConnections: maxU32, MaxPendingRequests: maxU32, MaxRequests: maxU32, MaxRetries: maxU32, TrackRemaining: true,
	}}}
}

// OriginalDstLbConfig tunes an ORIGINAL_DST cluster.
type OriginalDstLbConfig struct {
	// UpstreamPortOverride sends to this port whatever the original one,
	// as Istio's connect_originate sends HBONE to 15008.
	UpstreamPortOverride int `json:"upstream_port_override,omitempty"`
	// MetadataKey overrides the destination from connection metadata (a
	// waypoint's address, set per endpoint).
	MetadataKey *MetadataKey `json:"metadata_key,omitempty"`
}

// MetadataKey names a metadata value: a filter's namespace and a path.
type MetadataKey struct {
	Key  string            `json:"key"`
	Path []MetadataSegment `json:"path"`
}

// MetadataSegment is one step of a metadata path.
type MetadataSegment struct {
	Key string `json:"key"`
}

// BindConfig binds upstream sockets: a source address (Istio's inbound
// 127.0.0.6) and socket options (ztunnel's SO_MARK).
type BindConfig struct {
	SourceAddress *SocketAddress `json:"source_address,omitempty"`
	SocketOptions []SocketOption `json:"socket_options,omitempty"`
}

// SocketOption is a setsockopt applied before bind.
type SocketOption struct {
	Level    int    `json:"level"`
	Name     int    `json:"name"`
	IntValue int    `json:"int_value"`
	State    string `json:"state"`
}

// SOMark marks every packet of a socket (SOL_SOCKET, SO_MARK), the way
// ztunnel marks its own traffic so that capture rules skip it.
func SOMark(mark int) SocketOption {
	return SocketOption{Level: 1, Name: 36, IntValue: mark, State: "STATE_PREBIND"}
}

// StaticEndpoints makes a load assignment from addresses.
func StaticEndpoints(cluster string, addrs ...*Address) *LoadAssignment {
	la := &LoadAssignment{ClusterName: cluster, Endpoints: []LocalityLbEndpoint{{LbEndpoints: []LbEndpoint{}}}}
	for _, a := range addrs {
		la.Endpoints[0].LbEndpoints = append(la.Endpoints[0].LbEndpoints, LbEndpoint{Endpoint: Endpoint{Address: a}})
	}
	return la
}

const httpOptionsName = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// HTTP2Options makes a cluster speak HTTP/2 upstream (HBONE's CONNECT).
func HTTP2Options() map[string]Any {
	return map[string]Any{httpOptionsName: {Type: httpOptionsName, Value: map[string]any{
		"explicit_http_config": map[string]any{"http2_protocol_options": map[string]any{}},
	}}}
}

// DownstreamProtocolOptions makes a cluster speak upstream the protocol
// each request came in on: HTTP/1.1 stays HTTP/1.1 (Istio's default
// h2UpgradePolicy, DO_NOT_UPGRADE), HTTP/2 (h2c, gRPC) goes out as HTTP/2.
// Istio configures the clusters of ports whose protocol it detects this
// way; the test service serves all of them on its one port.
func DownstreamProtocolOptions() map[string]Any {
	return map[string]Any{httpOptionsName: {Type: httpOptionsName, Value: map[string]any{
		"use_downstream_protocol_config": map[string]any{"http_protocol_options": map[string]any{}, "http2_protocol_options": map[string]any{}},
	}}}
}
