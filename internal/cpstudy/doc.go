// Package cpstudy runs the control-plane study: what Istio's control
// plane costs as a mesh grows. It starts a local Kubernetes control plane
// (package localkube) with kwok's simulated nodes and pods, runs real
// istiod against it, pinned to a CPU of its own, and plays the mesh's
// proxies with synthetic xDS clients (package xdsload): one per pod as
// sidecars, with and without Sidecar scoping, or one per node as ztunnel
// in ambient mode. At each scale point and mode it records istiod's CPU
// and memory from its own cgroup, the configuration bytes each proxy
// receives, the time from a change in the cluster until every affected
// proxy has ACKed it, the full push after istiod restarts, and istiod's
// own push metrics, as raw data in a results directory, from which its
// report is computed.
package cpstudy
