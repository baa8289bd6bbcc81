package infra

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/topology"
)

// Info describes a platform and the host facts recorded with each result.
type Info struct {
	Name string `json:"name"` // "lab" or "kubernetes"
	// Host is the machine measured: the lab's host name, or the
	// Kubernetes API server's address; Context is the kubeconfig context.
	Host          string            `json:"host,omitempty"`
	Context       string            `json:"context,omitempty"`
	Kernel        string            `json:"kernel,omitempty"`
	CPUModel      string            `json:"cpu_model,omitempty"`
	CPUs          int               `json:"cpus,omitempty"`
	CgroupVersion int               `json:"cgroup_version,omitempty"`
	CanPinCPUs    bool              `json:"can_pin_cpus"`
	EnvoyVersion  string            `json:"envoy_version,omitempty"`
	Versions      map[string]string `json:"versions,omitempty"` // component -> version
	// OpenFiles is the open-file limit (RLIMIT_NOFILE) the platform's
	// containers start with, where the platform sets it (the lab): a
	// generator or a proxy holds at most that many connections.
	OpenFiles uint64 `json:"open_files,omitempty"`
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
	// unpinned. A node on Kubernetes has its machine's CPUs: a study
	// written for Kubernetes may not set it, and a lab study's is not
	// used there.
	CPUs string `json:"cpus,omitempty"`
	// Labels select the node's role on Kubernetes.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are taints the role's nodes carry on Kubernetes, as
	// "key=value:Effect" or "key:Effect"; the role's pods tolerate them.
	Taints []string `json:"taints,omitempty"`
}

// Taint effects a NodeSpec's taint may name, as Kubernetes defines them.
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// ParseTaint reads one of NodeSpec.Taints, "key=value:Effect" or
// "key:Effect" as kubectl taint writes it. The study check and the
// Kubernetes platform both read taints with it, so that a taint the
// cluster would not accept is refused before anything is created.
func ParseTaint(s string) (key, value, effect string, err error) {
	kv, effect, ok := strings.Cut(s, ":")
	switch {
	case kv == "":
		return "", "", "", fmt.Errorf("taint %q: no key: want key=value:Effect or key:Effect", s)
	case !ok || effect == "":
		return "", "", "", fmt.Errorf("taint %q: no effect: want key=value:Effect or key:Effect, such as %q, the effect one of %s",
			s, strings.TrimSuffix(s, ":")+":NoSchedule", strings.Join(TaintEffects, ", "))
	case !slices.Contains(TaintEffects, effect):
		return "", "", "", fmt.Errorf("taint %q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	key, value, _ = strings.Cut(kv, "=")
	return key, value, effect, nil
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
	// it. The runner gives each cell its own, beneath the results
	// directory, whose every write walks from there again: a directory on
	// its way swapped for a link mid-run is refused. It is not part of
	// the recorded load.
	LogDir confined.Dir `json:"-"`
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

// Platform names, as a study's platform.type gives them.
const (
	Lab        = "lab"
	Kubernetes = "kubernetes"
)

// Resource metrics on Kubernetes: the metrics API (metrics-server)
// resolves CPU and memory every KubernetesSampleInterval by default, and a
// measured phase shorter than MinSamplesPerPhase samples has too few to
// tell a mesh's cost, or none at all.
const (
	KubernetesSampleInterval = 15 * time.Second
	MinSamplesPerPhase       = 4
)
