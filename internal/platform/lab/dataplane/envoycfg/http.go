package envoycfg

// HCM is an HTTP connection manager with an inline route configuration.
type HCM struct {
	StatPrefix                  string            `json:"stat_prefix"`
	RouteConfig                 RouteConfig       `json:"route_config"`
	HTTPFilters                 []Extension       `json:"http_filters"`
	AccessLog                   []AccessLog       `json:"access_log,omitempty"`
	AccessLogOptions            *AccessLogOptions `json:"access_log_options,omitempty"`
	UseRemoteAddress            *bool             `json:"use_remote_address,omitempty"`
	NormalizePath               *bool             `json:"normalize_path,omitempty"`
	PathWithEscapedSlashes      string            `json:"path_with_escaped_slashes_action,omitempty"`
	StreamIdleTimeout           string            `json:"stream_idle_timeout,omitempty"`
	ForwardClientCertDetails    string            `json:"forward_client_cert_details,omitempty"`
	SetCurrentClientCertDetails *ClientCertDetail `json:"set_current_client_cert_details,omitempty"`
	UpgradeConfigs              []UpgradeConfig   `json:"upgrade_configs,omitempty"`
	HTTP2ProtocolOptions        map[string]any    `json:"http2_protocol_options,omitempty"`
	ServerName                  string            `json:"server_name,omitempty"`
}

// AccessLogOptions say when requests are logged besides at their end.
type AccessLogOptions struct {
	// FlushOnNewRequest logs a request when it starts too: a CONNECT
	// tunnel can live as long as its pooled connection.
	FlushOnNewRequest bool `json:"flush_access_log_on_new_request,omitempty"`
}

// ClientCertDetail selects the fields of the peer certificate put in XFCC.
type ClientCertDetail struct {
	Subject bool `json:"subject,omitempty"`
	URI     bool `json:"uri,omitempty"`
	DNS     bool `json:"dns,omitempty"`
}

// UpgradeConfig enables an upgrade type (CONNECT for HBONE).
type UpgradeConfig struct {
	UpgradeType   string `json:"upgrade_type"`
	ConnectConfig *Empty `json:"connect_config,omitempty"`
}

// RouteConfig is an inline route configuration.
type RouteConfig struct {
	Name             string        `json:"name"`
	VirtualHosts     []VirtualHost `json:"virtual_hosts"`
	ValidateClusters *bool         `json:"validate_clusters,omitempty"`
}

// VirtualHost groups routes by Host (authority).
type VirtualHost struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains"`
	Routes  []Route  `json:"routes"`
}

// Route is one route.
type Route struct {
	Name  string     `json:"name,omitempty"`
	Match RouteMatch `json:"match"`
	Route *RouteAct  `json:"route,omitempty"`
}

// RouteMatch matches a request's path, or a CONNECT.
type RouteMatch struct {
	Prefix         string `json:"prefix,omitempty"`
	ConnectMatcher *Empty `json:"connect_matcher,omitempty"`
}

// RouteAct forwards to a cluster.
type RouteAct struct {
	Cluster        string          `json:"cluster"`
	Timeout        string          `json:"timeout,omitempty"`
	PrefixRewrite  string          `json:"prefix_rewrite,omitempty"`
	UpgradeConfigs []UpgradeConfig `json:"upgrade_configs,omitempty"`
}

// HCMFilter wraps an HCM as a network filter.
func HCMFilter(h HCM) Extension {
	return Ext("envoy.filters.network.http_connection_manager",
		"envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager", h)
}

// Router is the terminal HTTP filter.
func Router() Extension {
	return Ext("envoy.filters.http.router", "envoy.extensions.filters.http.router.v3.Router", nil)
}

// Lua is Envoy's Lua HTTP filter running the inline source.
func Lua(source string) Extension {
	return Ext("envoy.filters.http.lua", "envoy.extensions.filters.http.lua.v3.Lua",
		map[string]any{"default_source_code": DataSource{InlineString: source}})
}

// SetFilterState is Envoy's set_filter_state HTTP filter: each value is
// computed from a format string and may be shared with the upstream, and
// from there with an internal listener.
func SetFilterState(values ...FilterStateValue) Extension {
	return Ext("envoy.filters.http.set_filter_state", "envoy.extensions.filters.http.set_filter_state.v3.Config",
		map[string]any{"on_request_headers": values})
}

// FilterStateValue is one value set_filter_state stores.
type FilterStateValue struct {
	ObjectKey          string       `json:"object_key"`
	FactoryKey         string       `json:"factory_key,omitempty"`
	FormatString       FormatString `json:"format_string"`
	SharedWithUpstream string       `json:"shared_with_upstream,omitempty"`
}

// FormatString is an inline substitution format string.
type FormatString struct {
	TextFormatSource DataSource `json:"text_format_source"`
}

// Text is a format string from inline text.
func Text(s string) FormatString { return FormatString{TextFormatSource: DataSource{InlineString: s}} }

// DataSource is a file or inline string.
type DataSource struct {
	Filename     string `json:"filename,omitempty"`
	InlineString string `json:"inline_string,omitempty"`
}
