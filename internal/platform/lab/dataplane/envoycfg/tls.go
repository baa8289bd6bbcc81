package envoycfg

// CommonTLS is the part of a TLS context shared by both directions.
type CommonTLS struct {
	TLSParams         *TLSParams         `json:"tls_params,omitempty"`
	TLSCertificates   []TLSCertificate   `json:"tls_certificates,omitempty"`
	ValidationContext *ValidationContext `json:"validation_context,omitempty"`
	ALPNProtocols     []string           `json:"alpn_protocols,omitempty"`
}

// TLSParams bounds the protocol versions and names the key-exchange
// groups offered.
type TLSParams struct {
	Min        string   `json:"tls_minimum_protocol_version,omitempty"`
	Max        string   `json:"tls_maximum_protocol_version,omitempty"`
	ECDHCurves []string `json:"ecdh_curves,omitempty"`
}

// TLSCertificate is a certificate chain and its key, from files.
type TLSCertificate struct {
	CertificateChain DataSource `json:"certificate_chain"`
	PrivateKey       DataSource `json:"private_key"`
}

// ValidationContext verifies the peer: trusted roots and SAN matchers.
type ValidationContext struct {
	TrustedCA DataSource   `json:"trusted_ca"`
	MatchSANs []SANMatcher `json:"match_typed_subject_alt_names,omitempty"`
}

// SANMatcher matches a subject alternative name of one type.
type SANMatcher struct {
	SANType string        `json:"san_type"`
	Matcher StringMatcher `json:"matcher"`
}

// StringMatcher matches a string exactly or by prefix.
type StringMatcher struct {
	Exact  string `json:"exact,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// URIExact matches a URI SAN exactly (a SPIFFE ID).
func URIExact(id string) SANMatcher {
	return SANMatcher{SANType: "URI", Matcher: StringMatcher{Exact: id}}
}

// URIPrefix matches URI SANs by prefix (a trust domain).
func URIPrefix(p string) SANMatcher {
	return SANMatcher{SANType: "URI", Matcher: StringMatcher{Prefix: p}}
}

// UpstreamTLS is a client-side TLS context.
type UpstreamTLS struct {
	Common CommonTLS `json:"common_tls_context"`
	SNI    string    `json:"sni,omitempty"`
}

// DownstreamTLS is a server-side TLS context.
type DownstreamTLS struct {
	Common                   CommonTLS `json:"common_tls_context"`
	RequireClientCertificate bool      `json:"require_client_certificate"`
}

// UpstreamTLSSocket wraps an UpstreamTLS as a transport socket.
func UpstreamTLSSocket(t UpstreamTLS) *Extension {
	e := Ext("envoy.transport_sockets.tls", "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", t)
	return &e
}

// DownstreamTLSSocket wraps a DownstreamTLS as a transport socket.
func DownstreamTLSSocket(t DownstreamTLS) *Extension {
	e := Ext("envoy.transport_sockets.tls", "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext", t)
	return &e
}

// InternalUpstreamSocket sends to an internal listener, passing the named
// host metadata along (Istio's waypoint passes the original destination).
func InternalUpstreamSocket(hostMetadata ...string) *Extension {
	var pass []map[string]any
	for _, name := range hostMetadata {
		pass = append(pass, map[string]any{"kind": map[string]any{"host": map[string]any{}}, "name": name})
	}
	e := Ext("envoy.transport_sockets.internal_upstream", "envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport",
		map[string]any{
			"passthrough_metadata": pass,
			"transport_socket":     Ext("envoy.transport_sockets.raw_buffer", "envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer", nil),
		})
	return &e
}
