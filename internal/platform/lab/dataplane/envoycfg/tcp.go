package envoycfg

// TCPProxy proxies a connection to a cluster, optionally tunnelled in an
// HTTP/2 CONNECT (HBONE).
type TCPProxy struct {
	StatPrefix string           `json:"stat_prefix"`
	Cluster    string           `json:"cluster"`
	Tunneling  *TunnelingConfig `json:"tunneling_config,omitempty"`
}

// TunnelingConfig makes the TCP proxy open a CONNECT to Hostname.
type TunnelingConfig struct {
	Hostname string `json:"hostname"`
}

// TCPProxyFilter wraps a TCPProxy as a network filter.
func TCPProxyFilter(t TCPProxy) Extension {
	return Ext("envoy.filters.network.tcp_proxy", "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", t)
}

// AccessLog is an access logger with an optional filter.
type AccessLog struct {
	Name        string           `json:"name"`
	Filter      *AccessLogFilter `json:"filter,omitempty"`
	TypedConfig Any              `json:"typed_config"`
}

// AccessLogFilter limits what is logged.
type AccessLogFilter struct {
	HeaderFilter  *HeaderFilter  `json:"header_filter,omitempty"`
	RuntimeFilter *RuntimeFilter `json:"runtime_filter,omitempty"`
}

// RuntimeFilter logs the share of requests a runtime key says, in
// percent; PercentSampled while the key is unset.
type RuntimeFilter struct {
	RuntimeKey     string  `json:"runtime_key"`
	PercentSampled Percent `json:"percent_sampled"`
}

// Percent is a FractionalPercent over a hundred.
type Percent struct {
	Numerator   int    `json:"numerator"`
	Denominator string `json:"denominator"`
}

// HeaderFilter logs only requests with a header present.
type HeaderFilter struct {
	Header HeaderMatcher `json:"header"`
}

// HeaderMatcher matches a header by name (present_match).
type HeaderMatcher struct {
	Name         string `json:"name"`
	PresentMatch bool   `json:"present_match"`
}

// FileLog appends text lines in format to path.
func FileLog(path, format string, filter *AccessLogFilter) AccessLog {
	return AccessLog{
		Name:   "envoy.access_loggers.file",
		Filter: filter,
		TypedConfig: Any{Type: "envoy.extensions.access_loggers.file.v3.FileAccessLog", Value: map[string]any{
			"path":       path,
			"log_format": map[string]any{"text_format_source": DataSource{InlineString: format}},
		}},
	}
}

// NetworkSetFilterState is the set_filter_state network filter: values
// computed when a connection is accepted.
func NetworkSetFilterState(values ...FilterStateValue) Extension {
	return Ext("envoy.filters.network.set_filter_state", "envoy.extensions.filters.network.set_filter_state.v3.Config",
		map[string]any{"on_new_connection": values})
}
