package cluster

import (
	"io"
	"net/netip"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/resources"
)

// Node is one node of a running lab.
type Node struct {
	Name    string       `json:"name"`
	Role    string       `json:"role"`
	CPUs    string       `json:"cpus,omitempty"`
	Index   int          `json:"index"` // from 1; fixes the IP and pod range
	IP      netip.Addr   `json:"ip"`
	PodCIDR netip.Prefix `json:"pod_cidr"`
	Netns   string       `json:"netns"`
}

// PodSpec says what pod to run.
type PodSpec struct {
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	Node           string            `json:"node"`
	Labels         map[string]string `json:"labels,omitempty"`
	ServiceAccount string            `json:"service_account,omitempty"`
	// HostNetwork runs the pod in its node's namespace with the node's IP,
	// as per-node daemons (kube-proxy, ztunnel) do.
	HostNetwork bool `json:"host_network,omitempty"`
	// Sysctls are namespaced net.* kernel settings of the pod's network
	// namespace ("net.ipv4.tcp_tw_reuse": "1"), set before its containers
	// start, as a Kubernetes pod's securityContext.sysctls; a host-network
	// pod shares its node's and may set none.
	Sysctls    map[string]string `json:"sysctls,omitempty"`
	Containers []ContainerSpec   `json:"containers"`
}

// RestartPolicy says when a container that exited is started again.
type RestartPolicy string

// Restart policies, as Kubernetes names them.
const (
	RestartAlways    RestartPolicy = "Always" // the default
	RestartOnFailure RestartPolicy = "OnFailure"
	RestartNever     RestartPolicy = "Never"
)

// ContainerSpec is one process of a pod, with its own cgroup.
type ContainerSpec struct {
	Name string `json:"name"`
	// Command is the argv; Command[0] is looked up in PATH.
	Command []string `json:"command"`
	Env     []string `json:"env,omitempty"` // added to the lab's own
	// UID and GID run the process as that user and group; 0 is root.
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
	// Caps are the capabilities the process keeps (setpriv's names:
	// "net_admin"), as ambient capabilities when it is not root; every
	// other capability is dropped, and no_new_privs is set, so neither
	// a setuid nor a file-capability program it runs gains any.
	Caps      []string               `json:"caps,omitempty"`
	Resources resources.Requirements `json:"resources"`
	Role      metrics.Role           `json:"role"`
	Restart   RestartPolicy          `json:"restart,omitempty"`
	// Readiness, when set, is probed with HTTP GET from inside the pod's
	// namespace; without it the container is ready once started.
	Readiness *Probe `json:"readiness,omitempty"`
	// Stdout, when set, receives the container's standard output instead
	// of the pod's log file (a load generator's JSON result).
	Stdout io.Writer `json:"-"`
	// Stderr, when set, receives the container's standard error instead
	// of the pod's log file (a load generator's own log).
	Stderr io.Writer `json:"-"`
}

// Probe is an HTTP GET to 127.0.0.1:Port/Path in the pod's namespace; a
// 2xx or 3xx answer passes. Dialing loopback keeps probes out of any
// traffic capture a mesh installs on the pod's interfaces.
type Probe struct {
	Port int    `json:"port"`
	Path string `json:"path"`
}

// Pod is a pod's observed state.
type Pod struct {
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	Node           string            `json:"node"`
	Labels         map[string]string `json:"labels,omitempty"`
	ServiceAccount string            `json:"service_account,omitempty"`
	HostNetwork    bool              `json:"host_network,omitempty"`
	IP             netip.Addr        `json:"ip"`
	Netns          string            `json:"netns"`
	Ready          bool              `json:"ready"`
	Containers     []Container       `json:"containers"`
}

// Key is "<namespace>/<name>".
func (p Pod) Key() string { return podKey(p.Namespace, p.Name) }

// Container is a container's observed state.
type Container struct {
	Name      string                 `json:"name"`
	Role      metrics.Role           `json:"role"`
	Resources resources.Requirements `json:"resources"`
	Restart   RestartPolicy          `json:"restart,omitempty"`
	// Cgroup is the container's directory relative to the lab's top
	// cgroup, the same in every controller's tree.
	Cgroup   string `json:"cgroup"`
	PID      int    `json:"pid,omitempty"` // 0 when not running
	Running  bool   `json:"running"`
	Ready    bool   `json:"ready"`
	Restarts int    `json:"restarts"`
	// ExitCode is the last exit status, -1 when killed by a signal.
	ExitCode int  `json:"exit_code"`
	Exited   bool `json:"exited"` // stopped for good (restart policy)
}

// ServiceSpec says what Service to run.
type ServiceSpec struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Selector picks the backing pods by label, in the same namespace.
	Selector   map[string]string `json:"selector"`
	Port       int               `json:"port"`
	TargetPort int               `json:"target_port,omitempty"` // default Port
}

// Service is a Service's observed state: its virtual IP and its ready
// endpoints.
type Service struct {
	ServiceSpec
	VIP       netip.Addr       `json:"vip"`
	Endpoints []netip.AddrPort `json:"endpoints"`
}

// Key is "<namespace>/<name>".
func (s Service) Key() string { return podKey(s.Namespace, s.Name) }

// Addr is the Service's VIP and port.
func (s Service) Addr() netip.AddrPort { return netip.AddrPortFrom(s.VIP, uint16(s.Port)) }

// selects reports whether a selector matches a label set; an empty
// selector matches nothing, as for a Service without selector.
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
