// Package envoycfg is the subset of Envoy's v3 configuration API that
// meshbench's proxies use, as Go types that marshal to Envoy's JSON, with
// constructors for the filters and transport sockets Istio configures.
package envoycfg
