package dataplane

import (
	"context"
	"net"
	"net/netip"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/topology"
)

// Cluster is what installing a mesh needs from the platform under it. The
// lab implements it; a platform with its own mesh installer does not.
type Cluster interface {
	// Inventory lists the cluster's nodes, pods and Services.
	Inventory(ctx context.Context) (Inventory, error)
	// AddContainer starts a container in an existing pod (a sidecar): in
	// the pod's network namespace, in a cgroup of its own. It returns once
	// the container runs.
	AddContainer(ctx context.Context, namespace, pod string, c Container) error
	// RemoveContainer stops a container AddContainer started.
	RemoveContainer(ctx context.Context, namespace, pod, name string) error
	// AddPod runs a pod of the mesh's own (node proxy, waypoint, ingress
	// gateway) and returns it, with its address, once its containers run.
	AddPod(ctx context.Context, p PodSpec) (Pod, error)
	// RemovePod stops and deletes a pod AddPod made.
	RemovePod(ctx context.Context, namespace, name string) error
	// Run runs a command (iptables-restore, ip) in a network namespace and
	// returns its combined output.
	Run(ctx context.Context, netns string, stdin []byte, args ...string) ([]byte, error)
	// Dial opens a TCP connection from inside a network namespace.
	Dial(ctx context.Context, netns, addr string) (net.Conn, error)
}

// Inventory is the cluster as a mesh sees it.
type Inventory struct {
	Nodes    []Node    `json:"nodes"`
	Pods     []Pod     `json:"pods"`
	Services []Service `json:"services"`
}

// Node is one node.
type Node struct {
	Name  string     `json:"name"`
	Role  string     `json:"role"` // infra.NodeRole
	IP    netip.Addr `json:"ip"`
	Netns string     `json:"netns"`
}

// Pod is one pod. Role says what it is: RoleApp pods serve the workload,
// RoleLoad pods are in-cluster load generators (meshed as clients, the
// identity the entry Service admits); the mesh leaves other pods alone.
type Pod struct {
	Namespace      string       `json:"namespace"`
	Name           string       `json:"name"`
	Node           string       `json:"node"`
	IP             netip.Addr   `json:"ip"`
	Netns          string       `json:"netns"`
	ServiceAccount string       `json:"service_account"`
	Role           metrics.Role `json:"role"`
	HostNetwork    bool         `json:"host_network,omitempty"`
}

// Key is "<namespace>/<name>".
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

// Service is a Service with its ready endpoints. Callers names the
// services of the same namespace that call it, from the graph; Entry
// marks the service the load generators call.
type Service struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	VIP       netip.Addr       `json:"vip"`
	Port      int              `json:"port"`
	Endpoints []netip.AddrPort `json:"endpoints"`
	Callers   []string         `json:"callers,omitempty"`
	// Protocols are the distinct protocols its callers use, http when
	// the graph says none.
	Protocols []topology.Protocol `json:"protocols,omitempty"`
	Entry     bool                `json:"entry,omitempty"`
}

// Key is "<namespace>/<name>".
func (s Service) Key() string { return s.Namespace + "/" + s.Name }

// Host is the Service's cluster-local DNS name.
func (s Service) Host() string { return s.Name + "." + s.Namespace + ".svc.cluster.local" }

// PodSpec is a pod of the mesh's own.
type PodSpec struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	Node           string `json:"node"`
	ServiceAccount string `json:"service_account"`
	// HostNetwork runs the pod in its node's network namespace.
	HostNetwork bool        `json:"host_network,omitempty"`
	Containers  []Container `json:"containers"`
}

// Container is one proxy process with its requests and limits.
type Container struct {
	Name    string       `json:"name"`
	Command []string     `json:"command"`
	Role    metrics.Role `json:"role"`
	// UID and GID run the process as that user; 0 means root. Proxies
	// run as 1337 so that capture rules can exempt their traffic.
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
	// Caps are the only capabilities the process keeps (setpriv's names).
	Caps      []string               `json:"caps,omitempty"`
	Resources resources.Requirements `json:"resources"`
}
