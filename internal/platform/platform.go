package platform

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/topology"
)

// Platform is one place to run studies. Every blocking method takes a
// context and undoes its partial work when that context ends.
type Platform interface {
	// Info reports what the platform is and can do, for the result's
	// provenance and for the runner's checks.
	Info(ctx context.Context) (Info, error)
	// Up brings the cluster up, or checks that an existing one has the
	// nodes and roles the spec asks for.
	Up(ctx context.Context, spec ClusterSpec) error
	// Deploy makes the workload's pods and Services run and be ready,
	// replacing any workload deployed before.
	Deploy(ctx context.Context, w Workload) error
	// InstallMesh installs a mesh profile on the deployed workload and runs
	// its verification checks. A failed check is returned in the checks
	// and as an error.
	InstallMesh(ctx context.Context, m MeshSpec) ([]Check, error)
	// RemoveMesh removes what InstallMesh installed, leaving the workload.
	RemoveMesh(ctx context.Context) error
	// Measure runs the load generators (warm-up, then the measured phase)
	// and samples every component's CPU and memory over exactly the
	// measured window.
	Measure(ctx context.Context, spec LoadSpec) (Measurement, error)
	// Down removes everything the platform made: workload, meshes, load
	// generators and, where it created it, the cluster.
	Down(ctx context.Context) error
}

// ContentionMeter is implemented by a platform that can read how much of
// the study's CPUs the host's hypervisor takes from it when they are busy
// (the lab, on a virtual machine): the runner waits for a quiet host
// before it measures again what a contended one spoiled.
type ContentionMeter interface {
	// Contention loads the study's CPUs for a moment, the way the
	// platform's own work does, and returns the share of their time the
	// hypervisor took.
	Contention(ctx context.Context) (float64, error)
}

// ContentionLimit is the share of the study's CPUs a hypervisor may take
// under load before the host counts as contended: above it, a study's
// cells mostly go over the noise guard's default 0.05 cores.
const ContentionLimit = 0.05

// Info describes a platform and the host facts recorded with each result.
type Info struct {
	Name          string            `json:"name"` // "lab" or "kubernetes"
	Kernel        string            `json:"kernel,omitempty"`
	CPUModel      string            `json:"cpu_model,omitempty"`
	CPUs          int               `json:"cpus,omitempty"`
	CgroupVersion int               `json:"cgroup_version,omitempty"`
	CanPinCPUs    bool              `json:"can_pin_cpus"`
	EnvoyVersion  string            `json:"envoy_version,omitempty"`
	Versions      map[string]string `json:"versions,omitempty"` // component -> version
}

// NodeRole is what a node is for, as the bookinfo study separated them.
type NodeRole string

// Node roles.
const (
	NodeApp     NodeRole = "app"
	NodeLoad    NodeRole = "load"
	NodeMesh    NodeRole = "mesh"    // control plane and ingress
	NodeIngress NodeRole = "ingress" // the ingress gateway's own node
	// NodeClient is outside the cluster: the ingress path's client, as
	// LiveWyer's VM was. The lab runs that path's generators there,
	// unmeshed; on Kubernetes the role is not used.
	NodeClient NodeRole = "client"
)

// NodeSpec is one node of the cluster.
type NodeSpec struct {
	Name string   `json:"name"`
	Role NodeRole `json:"role"`
	// CPUs pins the node to a CPU list such as "1" or "0-1"; empty means
	// unpinned. On Kubernetes it is ignored.
	CPUs string `json:"cpus,omitempty"`
	// Labels select the node's role on Kubernetes.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are taints the role's nodes carry on Kubernetes, as
	// "key=value:Effect" or "key:Effect"; the role's pods tolerate them.
	Taints []string `json:"taints,omitempty"`
}

// ParseCPUList parses a Linux CPU list such as "0-2,5", as NodeSpec.CPUs gives
// it, into CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// ClusterSpec is the cluster a study needs.
type ClusterSpec struct {
	Nodes []NodeSpec `json:"nodes"`
}

// NameNodes gives every unnamed node the name "<role>-<n>", n counting
// that role's nodes from 1 (app-1, load-1), so that a cluster can be
// given by roles alone, as on Kubernetes where nodes are found by label.
func NameNodes(nodes []NodeSpec) {
	count := map[NodeRole]int{}
	for i := range nodes {
		count[nodes[i].Role]++
		if nodes[i].Name == "" {
			nodes[i].Name = fmt.Sprintf("%s-%d", nodes[i].Role, count[nodes[i].Role])
		}
	}
}

// MeshSpec is one mesh profile and its settings. Zero values take the
// profile's defaults (Istio's: 2 workers, 100m / 128Mi per sidecar,
// 200m / 512Mi per node proxy, 100m / 128Mi per waypoint).
type MeshSpec struct {
	Profile          string `json:"profile"`
	Workers          int    `json:"workers,omitempty"`
	ProxyCPU         string `json:"proxy_cpu,omitempty"`
	ProxyMemory      string `json:"proxy_memory,omitempty"`
	NodeProxyCPU     string `json:"node_proxy_cpu,omitempty"`
	NodeProxyMemory  string `json:"node_proxy_memory,omitempty"`
	WaypointReplicas int    `json:"waypoint_replicas,omitempty"`
	// Context, on Kubernetes, is the kubeconfig context of the cluster
	// that runs this mesh, for a mesh that owns its cluster's network
	// (Cilium); empty is the study's cluster. Cells still interleave
	// across the clusters.
	Context string `json:"context,omitempty"`
}

// Check is one verification check's outcome.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
	// ConfigHash, on a check that verified the data plane's configuration,
	// is a hash of that configuration (every proxy's bootstrap), which the
	// results' provenance keeps per mesh.
	ConfigHash string `json:"config_hash,omitempty"`
	// Facts, on a check that records what was installed (on Kubernetes:
	// charts and versions, images, the values as installed, the cluster's
	// version and nodes), are kept with every cell that ran on it.
	Facts map[string]string `json:"facts,omitempty"`
}

// The verification checks that, passing together, prove mutual TLS
// between meshed pods: a plaintext connection from outside the mesh was
// refused, and a meshed call reached its server carrying the caller's
// identity, which only the mTLS handshake conveys. Every platform that
// makes these checks names them so; reports read mTLS from them alone.
const (
	CheckPlaintextRefused = "plaintext-refused"
	CheckPeerIdentity     = "peer-identity"
)

// MTLSProven reports whether the checks prove mutual TLS: both of the
// checks above are there and passed.
func MTLSProven(checks []Check) bool {
	var refused, identity bool
	for _, c := range checks {
		switch c.Name {
		case CheckPlaintextRefused:
			refused = c.Pass
		case CheckPeerIdentity:
			identity = c.Pass
		}
	}
	return refused && identity
}

// FailedChecks describes the checks that did not pass, as "name: detail"
// joined by "; ", or returns "" when every check passed.
func FailedChecks(checks []Check) string {
	var failed []string
	for _, c := range checks {
		if !c.Pass {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	return strings.Join(failed, "; ")
}

// LoadPath is where the load enters the workload.
type LoadPath string

// Load paths.
const (
	PathService LoadPath = "service" // a pod calling the entry Service
	PathIngress LoadPath = "ingress" // outside the cluster, through the ingress gateway
)

// LoadSpec is the load for one measurement. Options.URL is filled in by
// the platform per generator; the rest applies to each generator as given
// (a per-namespace generator gets the whole Rate and Connections).
type LoadSpec struct {
	Options      load.Options `json:"options"`
	Path         LoadPath     `json:"path"`
	PerNamespace bool         `json:"per_namespace"`
	// Resources are each generator pod's requests and limits on
	// Kubernetes (the 50-tenant study ran each vegeta at 500m / 300Mi);
	// the lab does not apply them.
	Resources topology.Resources `json:"resources,omitzero"`
	// Tenants, with PerNamespace, loads only the first Tenants namespaces
	// (ns-1 ... ns-Tenants), the others deployed but idle; 0 loads all.
	Tenants int `json:"tenants,omitempty"`
	// LogDir, when set, is a directory for this measurement's logs: each
	// generator's own output, and the logs of pods that restarted during
	// it. The runner gives each cell its own; Measure creates it when it
	// writes there. It is not part of the recorded load.
	LogDir string `json:"-"`
}

// Measurement is what one measured phase produced.
type Measurement struct {
	Start      time.Time        `json:"start"`
	End        time.Time        `json:"end"`
	Generators []load.Result    `json:"generators"`
	Resources  []metrics.Series `json:"resources"`
	// Replicas are the requests each app replica answered during the
	// measurement (warm-up included), where the platform can count them;
	// they show how a mesh spread requests over a Service's replicas.
	Replicas []ReplicaRequests `json:"replicas,omitempty"`
	// Host is what the platform's CPUs did besides the study during the
	// measured phase; nil where the platform does not measure it (on
	// Kubernetes, other tenants' pods and the nodes' own daemons are not
	// seen).
	Host *HostCPU `json:"host,omitempty"`
}

// HostCPU is the CPU time spent on the study's CPUs by anything outside
// the study, over one measured phase, in cores (CPU-seconds per second).
type HostCPU struct {
	// CPUs is how many CPUs the study's nodes run on.
	CPUs int `json:"cpus"`
	// Noise is the CPU used on those CPUs by anything but the study's own
	// containers and runner, the hypervisor's steal time included.
	Noise float64 `json:"noise_cores"`
	Steal float64 `json:"steal_cores"`
	// Softirq is the kernel's softirq time on those CPUs: charged to the
	// study, not to Noise, for it is mostly the kernel carrying the
	// study's own packets.
	Softirq float64 `json:"softirq_cores,omitempty"`
	// Slowdown is how much slower the study's CPUs ran a fixed piece of
	// work around the measurement than at their fastest in the run (0.3
	// is 30% slower): a shared host's contention that no counter shows.
	// Zero where the platform does not measure it.
	Slowdown float64 `json:"slowdown,omitempty"`
	// Nodes holds each node's CPUs and everything that ran on them.
	Nodes []NodeCPU `json:"nodes,omitempty"`
}

// NodeCPU is one node's CPUs over a measured phase: Busy is everything
// that ran on them, study or not, and Outside the part outside the study,
// both in cores. Nodes may share CPUs, so nodes' figures need not add up.
type NodeCPU struct {
	Name    string   `json:"name"`
	Role    NodeRole `json:"role"`
	CPUs    int      `json:"cpus"`
	Busy    float64  `json:"busy_cores"`
	Outside float64  `json:"outside_cores"`
}

// Node returns the figures of the first node with the role, if any.
func (h *HostCPU) Node(role NodeRole) (NodeCPU, bool) {
	if h != nil {
		for _, n := range h.Nodes {
			if n.Role == role {
				return n, true
			}
		}
	}
	return NodeCPU{}, false
}

// ReplicaRequests is how many requests one replica (pod) of a service
// answered.
type ReplicaRequests struct {
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`
	Requests  int64  `json:"requests"`
}

// Workload is the application under test: a service graph stamped into
// Namespaces isolated copies (ns-1 ... ns-N).
type Workload struct {
	Graph      *topology.Graph `json:"graph"`
	Namespaces int             `json:"namespaces"`
	// Replicas overrides the graph's replica count per service name, for
	// replica sweeps.
	Replicas map[string]int `json:"replicas,omitempty"`
}

// ReplicasOf is how many replicas of deployment d run in each namespace:
// the graph's, or the override for its service.
func (w Workload) ReplicasOf(d topology.Deployment) int {
	if r, ok := w.Replicas[d.Service]; ok {
		return r
	}
	return d.Replicas
}

// Pods is how many application pods the workload runs in all its
// namespaces; a platform's load generators come on top.
func (w Workload) Pods() int {
	n := 0
	for _, d := range w.Graph.Deployments() {
		n += w.ReplicasOf(d)
	}
	return n * w.Namespaces
}
