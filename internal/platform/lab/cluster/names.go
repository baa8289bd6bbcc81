package cluster

import "fmt"

// Every name the lab makes in a global place (network namespaces under
// /run/netns, cgroup directories) starts with "<prefix>-", so discovery
// and clean-up never match anything else. Interfaces live only inside the
// lab's own namespaces, where their short names cannot collide.

// CloudNetns is the name of the namespace holding the bridge between nodes.
func CloudNetns(prefix string) string { return prefix + "-cloud" }

// NodeNetns is the name of a node's network namespace.
func NodeNetns(prefix, node string) string { return prefix + "-n-" + node }

// PodNetns is the name of a pod's network namespace. The underscore cannot
// occur in namespace or pod names, so the name is unambiguous.
func PodNetns(prefix, namespace, pod string) string {
	return prefix + "-p-" + namespace + "_" + pod
}

// Interface names inside the lab's namespaces (at most 15 bytes).
const (
	bridgeName = "br0"  // in the cloud namespace
	uplinkName = "eth0" // a node's link to the cloud, and a pod's to its node
)

// cloudPortName is a node's veth end in the cloud namespace.
func cloudPortName(nodeIndex int) string { return fmt.Sprintf("n%d", nodeIndex) }

// podPortName is a pod's veth end in its node's namespace; id is unique in
// the lab for its lifetime.
func podPortName(id uint32) string { return fmt.Sprintf("v%08x", id) }

// podKey is how pods are indexed: "<namespace>/<name>".
func podKey(namespace, name string) string { return namespace + "/" + name }
