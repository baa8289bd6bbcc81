// Package mesh installs service-mesh data planes on a cluster the way
// Istio configures them (sidecar, ambient node proxy, waypoint, policies,
// ingress gateway), with real Envoy, a meshbench-run CA and iptables
// capture, and verifies them before anything is measured.
package dataplane
