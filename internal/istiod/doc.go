// Package istiod runs real istiod (Istio's pilot-discovery, built by
// scripts/istiod-build.sh) against a local API server (package
// localkube): it finds the build, installs Istio's CRDs, and starts,
// stops and scrapes the process inside the cluster's network namespace.
// The control-plane study and the lab's istiod control plane both run
// istiod through it.
package istiod
