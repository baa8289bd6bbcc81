// Package dataplane installs the lab's service-mesh data planes, each an
// implementation of DataPlane registered by name (the Istio-style sidecar,
// the Istio-style ambient node proxy with its waypoints), with real
// Envoy, a meshbench-run CA and iptables capture, the ingress gateway and
// policies, and verifies them before anything is measured.
package dataplane
