// Package xdsload plays a mesh's proxies against a real control plane:
// synthetic xDS clients that subscribe as Istio sidecars (state-of-the-
// world ADS: clusters and listeners, then the endpoints and routes they
// name) or as ztunnel node proxies (delta ADS for workload addresses and
// authorizations), ACK every response and count its bytes.
//
// The clients decode only what the protocol needs (the names of EDS
// clusters and RDS route configurations) from the wire format; they apply
// no configuration, so they cost the control plane what real proxies cost
// it, and none of what Envoy or ztunnel costs to apply it. No Istio or
// Envoy Go package is used.
package xdsload
