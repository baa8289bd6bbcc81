// Package localkube runs a local Kubernetes control plane for meshbench's
// control-plane study: etcd, kube-apiserver, kube-controller-manager (for
// EndpointSlices and ServiceAccounts) and kwok (which stands in for
// kubelets, nodes and pods), all built from the Go module proxy by
// scripts/k8s-testbin.sh, inside a network namespace of their own that
// holds only loopback, so that nothing they do leaves the machine.
//
// The namespace belongs to one locked OS thread of this process: every
// process is forked from it and every connection into the namespace is
// dialled from it, and the namespace disappears with that thread and the
// processes in it.
package localkube
