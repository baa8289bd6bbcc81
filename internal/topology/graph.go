package topology

import (
	"slices"

	"github.com/meshbench/meshbench/internal/resources"
)

// Graph is a service graph: the services of one application and the calls
// between them. Every namespace of a workload holds a full copy of it.
type Graph struct {
	Name string `json:"name"`
	// Entry names the service the load generator calls.
	Entry string `json:"entry"`
	// EntryPath is the path the load generator requests; default "/".
	EntryPath string `json:"entry_path,omitempty"`
	// EntryProtocol is how the load generator calls the entry; default
	// http.
	EntryProtocol Protocol  `json:"entry_protocol,omitempty"`
	Services      []Service `json:"services"`
}

// Protocol is how one service calls another. Every service serves all of
// them on its one port; the caller picks.
type Protocol string

// The protocols of an edge. Empty means ProtocolHTTP.
const (
	// ProtocolHTTP is HTTP/1.1 with keep-alive.
	ProtocolHTTP Protocol = "http"
	// ProtocolH2C is HTTP/2 in cleartext with prior knowledge.
	ProtocolH2C Protocol = "h2c"
	// ProtocolGRPC is unary gRPC (over h2c).
	ProtocolGRPC Protocol = "grpc"
)

// Protocols lists the valid protocols.
var Protocols = []Protocol{ProtocolHTTP, ProtocolH2C, ProtocolGRPC}

// Or returns p, or ProtocolHTTP when p is empty.
func (p Protocol) Or() Protocol {
	if p == "" {
		return ProtocolHTTP
	}
	return p
}

// HTTP2 reports whether the protocol runs over HTTP/2, so that a proxy
// carrying it needs HTTP/2 upstream.
func (p Protocol) HTTP2() bool { return p == ProtocolH2C || p == ProtocolGRPC }

func (p Protocol) valid() bool {
	return p == "" || slices.Contains(Protocols, p)
}

// Service is one service of a graph: one Kubernetes Service, backed by one
// deployment per version. Zero values take defaults when the graph is
// normalized (by Parse, Load or Builtin).
type Service struct {
	Name string `json:"name"`
	// Port is the port the service listens on and is called at; default 8080.
	Port int `json:"port,omitempty"`
	// Replicas per version; default 1.
	Replicas int `json:"replicas,omitempty"`
	// ServiceAccount is the workload identity; default the service name.
	ServiceAccount string    `json:"service_account,omitempty"`
	Resources      Resources `json:"resources,omitempty"`
	// ResponseSize is the minimum size in bytes of the JSON answer; the
	// call tree is padded up to it.
	ResponseSize int `json:"response_size,omitempty"`
	// CPUWork is CPU time burnt per request, busy, on the request's thread.
	CPUWork Duration `json:"cpu_work,omitempty"`
	// Latency is an idle delay added per request, after the script.
	Latency Duration `json:"latency,omitempty"`
	// Script is what one request does downstream, step by step.
	Script []Step `json:"script,omitempty"`
	// Versions run side by side behind the one service, as bookinfo's
	// reviews v1, v2 and v3 do. Empty means one version, "v1".
	Versions []Version `json:"versions,omitempty"`
}

// Version is one deployment of a service. Non-zero fields override the
// service's; a non-empty Script replaces the service's script.
type Version struct {
	Name         string   `json:"name"`
	Replicas     int      `json:"replicas,omitempty"`
	ResponseSize int      `json:"response_size,omitempty"`
	CPUWork      Duration `json:"cpu_work,omitempty"`
	Latency      Duration `json:"latency,omitempty"`
	Script       []Step   `json:"script,omitempty"`
}

// Step is one step of a script: either one call or a group of calls made
// in parallel. Steps run one after the other.
type Step struct {
	Call     *Call  `json:"call,omitempty"`
	Parallel []Call `json:"parallel,omitempty"`
}

// Call is a call to a downstream service, made Count times in sequence
// (default 1), each with Probability (default 1, always), over Protocol
// (default http).
type Call struct {
	Service     string   `json:"service"`
	Count       int      `json:"count,omitempty"`
	Probability float64  `json:"probability,omitempty"`
	Protocol    Protocol `json:"protocol,omitempty"`
}

// Edge is one service called over one protocol.
type Edge struct {
	Service  string
	Protocol Protocol // never empty
}

// Calls returns a step's calls: the one call or the parallel group.
func (s Step) Calls() []Call {
	if s.Call != nil {
		return []Call{*s.Call}
	}
	return s.Parallel
}

// Resources are Kubernetes resource requests and limits as quantity
// strings ("700m", "500Mi"); empty means none.
//
// They stay the text the graph file gave, not resources.Requirements: a
// results directory stores its graph (graph.yaml) as written, and a
// parsed form would write "0.5" back as "500m", changing a stored graph.
// Requirements is the one conversion.
type Resources struct {
	CPURequest    string `json:"cpu_request,omitempty"`
	CPULimit      string `json:"cpu_limit,omitempty"`
	MemoryRequest string `json:"memory_request,omitempty"`
	MemoryLimit   string `json:"memory_limit,omitempty"`
}

// Requirements are the parsed requests and limits. A normalized graph
// has validated them, so a quantity that does not parse can only come from
// an unvalidated graph; it reads as unset.
func (r Resources) Requirements() resources.Requirements {
	cpuReq, _ := resources.ParseCPU(r.CPURequest)
	cpuLim, _ := resources.ParseCPU(r.CPULimit)
	memReq, _ := resources.ParseMemory(r.MemoryRequest)
	memLim, _ := resources.ParseMemory(r.MemoryLimit)
	return resources.Requirements{CPURequestMilli: cpuReq, CPULimitMilli: cpuLim, MemRequestBytes: memReq, MemLimitBytes: memLim}
}

// Service returns the named service, or nil.
func (g *Graph) Service(name string) *Service {
	for i := range g.Services {
		if g.Services[i].Name == name {
			return &g.Services[i]
		}
	}
	return nil
}
