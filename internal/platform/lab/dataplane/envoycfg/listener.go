package envoycfg

// Listener is a socket or internal listener.
type Listener struct {
	Name    string   `json:"name"`
	Address *Address `json:"address,omitempty"`
	// UseOriginalDst hands a redirected connection to the listener bound to
	// its original destination, as Istio's virtualOutbound does.
	UseOriginalDst *bool `json:"use_original_dst,omitempty"`
	// BindToPort false makes a listener that only takes hand-offs.
	BindToPort *bool `json:"bind_to_port,omitempty"`
	// Transparent sets IP_TRANSPARENT, needed to accept TPROXY connections.
	Transparent      *bool          `json:"transparent,omitempty"`
	ListenerFilters  []Extension    `json:"listener_filters,omitempty"`
	FilterChains     []FilterChain  `json:"filter_chains,omitempty"`
	InternalListener *Empty         `json:"internal_listener,omitempty"`
	TrafficDirection string         `json:"traffic_direction,omitempty"`
	Balance          *BalanceConfig `json:"connection_balance_config,omitempty"`
}

// BalanceConfig spreads accepted connections over worker threads.
type BalanceConfig struct {
	ExactBalance *Empty `json:"exact_balance,omitempty"`
}

// FilterChain is one filter chain with its match.
type FilterChain struct {
	Name            string            `json:"name,omitempty"`
	Match           *FilterChainMatch `json:"filter_chain_match,omitempty"`
	Filters         []Extension       `json:"filters"`
	TransportSocket *Extension        `json:"transport_socket,omitempty"`
}

// FilterChainMatch selects a filter chain by destination, source and
// transport.
type FilterChainMatch struct {
	DestinationPort    int         `json:"destination_port,omitempty"`
	PrefixRanges       []CidrRange `json:"prefix_ranges,omitempty"`
	SourcePrefixRanges []CidrRange `json:"source_prefix_ranges,omitempty"`
	TransportProtocol  string      `json:"transport_protocol,omitempty"`
}

// CidrRange is an address prefix.
type CidrRange struct {
	AddressPrefix string `json:"address_prefix"`
	PrefixLen     int    `json:"prefix_len"`
}

// Host is a /32 range for one IPv4 address.
func Host(ip string) []CidrRange { return []CidrRange{{AddressPrefix: ip, PrefixLen: 32}} }

// Bool returns a pointer for optional boolean fields.
func Bool(b bool) *bool { return &b }

// Listener filters.

// OriginalDst restores the pre-redirect destination (SO_ORIGINAL_DST, or
// the filter state an internal upstream passed).
func OriginalDst() Extension {
	return Ext("envoy.filters.listener.original_dst", "envoy.extensions.filters.listener.original_dst.v3.OriginalDst", nil)
}

// TLSInspector detects TLS and reads SNI and ALPN for chain matching.
func TLSInspector() Extension {
	return Ext("envoy.filters.listener.tls_inspector", "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector", nil)
}
