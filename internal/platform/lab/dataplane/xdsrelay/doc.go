// Package xdsrelay sits between istiod and the lab's upstream Envoys: it
// relays each proxy's aggregated xDS stream (state of the world or delta)
// to istiod's plaintext port and, in istiod's responses, takes out or
// marks optional only the Istio-only extensions that upstream Envoy has
// no implementation of (istio-proxy's filters: metadata exchange, peer
// metadata, istio.stats, the ALPN override, istio_authn, and the
// istio.hashable_string filter-state factory). Without it one such
// extension makes Envoy reject the whole listener or cluster. Every
// change is recorded, so a report can say how far the configuration that
// ran is from istiod's.
package xdsrelay
