package xdsrelay

// Istio-shaped resources for the external tests.
var (
	SidecarInbound  = sidecarInbound
	OutboundCluster = outboundCluster
)
