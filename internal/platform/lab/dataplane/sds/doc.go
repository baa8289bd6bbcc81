// Package sds serves Envoy's secrets the way istio-agent does for a proxy
// configured by istiod: over gRPC SDS (state of the world), the workload
// certificate as "default" and the mesh's root as "ROOTCA", the names
// istiod's listeners and clusters ask for.
package sds
