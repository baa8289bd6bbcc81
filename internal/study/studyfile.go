package study

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// The study file's version and kind; a file must name both.
const (
	APIVersion = "meshbench.dev/v1alpha1"
	Kind       = "Study"
)

// Study is a study file: the workload, the meshes to compare, the load, the
// sweeps, the repetitions and the platform. Parse fills in defaults and
// validates it; the YAML field names are the json tags.
type Study struct {
	APIVersion  string   `json:"apiVersion"`
	Kind        string   `json:"kind"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Platform    Platform `json:"platform"`
	Workload    Workload `json:"workload"`
	Meshes      []Mesh   `json:"meshes"`
	Load        Load     `json:"load"`
	// Sweeps vary parameters; the cells are their cross product.
	Sweeps []Sweep `json:"sweeps,omitempty"`
	// Repetitions of every cell: a count of interleaved rounds (default
	// DefaultRepetitions) or {min, max, ci}, a pilot of min rounds that
	// plans the total (see Repetitions).
	Repetitions Repetitions `json:"repetitions,omitzero"`
	// Deployments is how many independent deployments the rounds span,
	// each with the platform brought up afresh, the workload deployed, its
	// own mesh installations and, where the study calibrates, its own
	// calibration: the units every interval is computed over. Default one
	// per round; it must divide repetitions (their min).
	Deployments int   `json:"deployments,omitempty"`
	Order       Order `json:"order"`
	// Noise is the host-noise guard, where the platform measures it.
	Noise *Noise `json:"noise,omitempty"`
	// MaxErrorRate is the share of a cell's requests that may fail (no
	// response, or a 5xx) before the cell fails: its latency, from the
	// requests that succeeded, no longer describes the mesh. Default
	// DefaultMaxErrorRate, the capacity SLO's.
	MaxErrorRate *float64 `json:"max_error_rate,omitempty"`
	// Scaling says how to fit a full-size study to a smaller platform; the
	// lab applies it, a Kubernetes cluster runs the study as written.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Published are the figures the study's authors published, which the
	// report sets beside the run's own (see docs/studies.md for the
	// metrics).
	Published []results.Published `json:"published,omitempty"`
	// Search, when set, makes the study a capacity search: each mesh's
	// highest rate within an SLO, rather than cells at given rates.
	Search *Search `json:"search,omitempty"`
	// Thresholds are pass-or-fail checks on the verdict's figures, each
	// "[<mesh>:] <metric> <op> <number>" (see analysis.ThresholdMetrics):
	// meshbench run and meshbench report exit 4 when one is not met.
	Thresholds []analysis.ThresholdText `json:"thresholds,omitempty"`

	// Graph is the workload's graph, resolved and normalized by Parse.
	Graph *topology.Graph `json:"-"`
	// SHA256 is the hex hash of the file Parse read.
	SHA256 string `json:"-"`
}

// Platform types.
const (
	PlatformLab        = infra.Lab
	PlatformKubernetes = infra.Kubernetes
)

// Platform says where the study runs and the cluster's shape.
type Platform struct {
	// Type is "lab" (default) or "kubernetes".
	Type string `json:"type,omitempty"`
	// Nodes are the cluster's nodes and roles; on the lab, CPUs pins a
	// node (for example the load generators) to a CPU list.
	Nodes      []infra.NodeSpec `json:"nodes,omitempty"`
	Kubernetes *Kubernetes      `json:"kubernetes,omitempty"`
	// Ingress is set by Parse when some cell loads through the ingress
	// gateway, so that a platform which installs one only on demand
	// (Kubernetes) installs it with each mesh.
	Ingress bool `json:"-"`
	// Meshes are the study's meshes, set by Parse, so that a platform can
	// refuse one it cannot host before anything is created, and open the
	// clusters the meshes name.
	Meshes []mesh.MeshSpec `json:"-"`
}

// Kubernetes says how to reach an existing cluster.
type Kubernetes struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// Image is meshbench's own image, which every app and load pod runs.
	Image           string `json:"image,omitempty"`
	ImagePullPolicy string `json:"image_pull_policy,omitempty"`
	// Prometheus is the URL of a Prometheus scraping cAdvisor; empty
	// samples the metrics API instead.
	Prometheus string `json:"prometheus,omitempty"`
	// Charts override the pinned Helm chart of a mesh component, by key
	// (istio-base, istiod, istio-cni, ztunnel, linkerd-crds,
	// linkerd-control-plane, istio-gateway): another version, source or
	// values. Cilium has none: meshbench never installs a network plugin.
	Charts map[string]mesh.ChartSource `json:"charts,omitempty"`
	// Timeout bounds each wait for readiness; default 5m.
	Timeout topology.Duration `json:"timeout,omitempty"`
	// GatewayImage is the plain ingress gateway's Envoy image, for the
	// ingress path under baseline, Linkerd and Cilium.
	GatewayImage string `json:"gateway_image,omitempty"`
	// NamespacePrefix names the workload's namespaces, PREFIX1 ...
	// PREFIXn, in place of ns-1 ... ns-N, for a cluster where those
	// exist already (meshbench never uses a namespace it did not make).
	NamespacePrefix string `json:"namespace_prefix,omitempty"`
	// SampleInterval is how often the metrics source resolves CPU and
	// memory (the metrics API's window, Prometheus's scrape interval);
	// default 15s. Measured phases are at least four of it.
	SampleInterval topology.Duration `json:"sample_interval,omitempty"`
}

// Workload is the application under test.
type Workload struct {
	// Graph is a built-in graph's name or a graph file's path, relative to
	// the study file.
	Graph string `json:"graph"`
	// Namespaces is the number of isolated copies (ns-1 ... ns-N); default 1.
	Namespaces int `json:"namespaces,omitempty"`
	// Replicas overrides replicas per service name.
	Replicas map[string]int `json:"replicas,omitempty"`
	// Resources overrides requests and limits per service name; the key
	// "*" applies to every service, a service's own key wins over it.
	Resources map[string]topology.Resources `json:"resources,omitempty"`
	// CPUWork overrides the CPU time a service burns per request, per
	// service name ("*" for every service), so that the test service costs
	// what the study's application cost relative to its proxies.
	CPUWork map[string]topology.Duration `json:"cpu_work,omitempty"`
}

// Mesh is one mesh to compare: a profile and its settings, under a name
// that is unique in the study (default: the profile), so that one profile
// can be compared with itself under other settings.
type Mesh struct {
	Name string `json:"name,omitempty"`
	// Platforms, when set, are the only platforms the mesh is part of
	// the study on, for a study that runs everywhere but compares a mesh
	// only one platform runs (Linkerd, on Kubernetes).
	Platforms []string `json:"platforms,omitempty"`
	mesh.MeshSpec
}

// UnmarshalJSON reads a mesh as a mapping, or as the shorthand a user
// writes first, a profile's name alone (meshes: [baseline, sidecar]).
func (m *Mesh) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var profile string
		if err := json.Unmarshal(b, &profile); err != nil {
			return err
		}
		*m = Mesh{MeshSpec: mesh.MeshSpec{Profile: profile}}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("want a profile's name such as sidecar, or a mapping with profile and name, got %s", b)
	}
	// plain has Mesh's fields without this method.
	type plain Mesh
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(m))
}

// Generator layouts.
const (
	GeneratorsOne          = "one"           // one generator for the whole workload
	GeneratorsPerNamespace = "per-namespace" // one generator per namespace
)

// Load is the load of every cell before sweeps change it.
type Load struct {
	// Rate is the open-loop arrival rate per generator in requests per
	// second; zero means closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Arrivals is an open loop's arrival process: "uniform" (default,
	// evenly spaced sends) or "poisson" (exponential gaps of the same
	// mean, each cell's drawn from the study's seed and the cell, so that
	// a run's arrivals are reproduced by the same study). A closed loop
	// has none, and refuses it.
	Arrivals string `json:"arrivals,omitempty"`
	// Connections is the closed loop's concurrency, or the open loop's
	// connection limit; default 64.
	Connections int `json:"connections,omitempty"`
	// Duration or Requests bounds the measured phase; exactly one is set.
	Duration topology.Duration `json:"duration,omitempty"`
	Requests int64             `json:"requests,omitempty"`
	Warmup   topology.Duration `json:"warmup,omitempty"`
	// Timeout per request; default 10s.
	Timeout topology.Duration `json:"timeout,omitempty"`
	// KeepAlive reuses connections; default true.
	KeepAlive *bool `json:"keepalive,omitempty"`
	// ConnRequests closes each HTTP/1.1 connection after it carried this
	// many requests, the next opening a new one; 0 (default) keeps it. With
	// rate R, R/ConnRequests new connections a second.
	ConnRequests int  `json:"conn_requests,omitempty"`
	HTTP2        bool `json:"http2,omitempty"`
	// Upload sends that many bytes of filler as each request's body, in a
	// POST: an upload. 0 (default) sends GETs without a body.
	Upload int64 `json:"upload,omitempty"`
	// Path is "service" (default: a pod calling the entry Service) or
	// "ingress" (from outside, through the ingress gateway).
	Path infra.LoadPath `json:"path,omitempty"`
	// Generators is "one" (default) or "per-namespace".
	Generators string `json:"generators,omitempty"`
	// Resources are each generator pod's requests and limits, on
	// Kubernetes.
	Resources topology.Resources `json:"resources,omitzero"`
}

// Sweep varies one parameter over Values, or several together: with
// Params, each value is a list holding one value per parameter, so that
// the parameters change in step rather than as a cross product.
type Sweep struct {
	Param  string            `json:"param,omitempty"`
	Params []string          `json:"params,omitempty"`
	Values []json.RawMessage `json:"values"`
}

// Order is how cells are ordered. Meshes are always interleaved: every
// round runs each mesh once.
type Order struct {
	// Shuffle randomizes the mesh order within each round; default true.
	Shuffle *bool `json:"shuffle,omitempty"`
	// Seed seeds the shuffle; default derived from the study file's hash,
	// so that the same file always plans the same order.
	Seed uint64 `json:"seed,omitempty"`
}

// Noise is the host-noise guard: a cell measured while anything outside
// the study used more than Threshold cores of the study's CPUs (steal time
// included) is noisy; noisy cells run again at the end of the study, up to
// Retries more times, and reports leave out those that stay noisy.
type Noise struct {
	// Threshold in cores; default 0.05.
	Threshold float64 `json:"threshold,omitempty"`
	// Retries is how many more times a noisy cell runs; default 2.
	Retries *int `json:"retries,omitempty"`
}

// Scaling fits a full-size study to a smaller platform. By default the
// runner first measures each mesh's capacity with a short closed loop and
// scales every open-loop rate and request count by one factor, so that the
// slowest mesh runs at Fraction of its capacity; the topology, namespaces,
// meshes and load model stay as written.
type Scaling struct {
	// Fraction of the slowest mesh's measured capacity that the open-loop
	// load offers in total; default 0.5.
	Fraction float64 `json:"fraction,omitempty"`
	// Measure caps each measured phase; closed-loop request counts shrink
	// so that the largest takes about this long at the slowest mesh's
	// capacity. Default 20s.
	Measure topology.Duration `json:"measure,omitempty"`
	// Warmup caps each warm-up; default 5s.
	Warmup topology.Duration `json:"warmup,omitempty"`
	// MinRequests lengthens a scaled open loop's measured phase, past
	// Measure if need be, so that it sends at least this many requests at
	// its scaled rate: a slow or busy machine scales the rate down, and a
	// cell of a few hundred requests holds no p99. 0 leaves durations be.
	MinRequests int64 `json:"min_requests,omitempty"`
	// Tenants, when set, scales the number of loaded tenants instead of
	// the rate: each per-namespace generator keeps the study's rate,
	// connections and protocol, lowered only as far as Fraction of the
	// slowest mesh's capacity needs at the largest count; the cells run at
	// each count given (two, so that additive figures can be extrapolated
	// to the study's namespaces and their linearity checked).
	Tenants []int `json:"tenants,omitempty"`
	// Deploy is "loaded" (default: only the loaded tenants are deployed)
	// or "all" (every namespace of the study is deployed, the first
	// Tenants of them loaded).
	Deploy string `json:"deploy,omitempty"`
	// CalibrateWork scales workload.cpu_work, every service by one factor,
	// so that on this machine the app costs what the study's app cost
	// relative to its proxies: from the published throughput (qps) of the
	// baseline and each mesh at the calibration's configuration, and the
	// capacities calibration measures here (see calibrateWork).
	CalibrateWork bool `json:"calibrate_work,omitempty"`
	// MinAppCPUs is the fewest CPUs the lab's default app node runs on.
	// A study's pods spread over many nodes ran its fan-out's parallel
	// calls on CPUs of their own; an app node of fewer CPUs than the
	// graph's widest parallel step runs them one after the other, which
	// the study never did. Where the default layout gives the app node
	// fewer (one, on a 2-CPU machine), it runs on every CPU, sharing the
	// load node's; the load node's busy check still watches that CPU. It
	// applies to the lab's default nodes only: a study that names its
	// nodes sets their CPUs there.
	MinAppCPUs int `json:"min_app_cpus,omitempty"`
}

// minAppCPUs is MinAppCPUs, zero without a scaling section.
func (sc *Scaling) minAppCPUs() int {
	if sc == nil {
		return 0
	}
	return sc.MinAppCPUs
}

// Deployed footprints in tenant scaling.
const (
	DeployLoaded = "loaded"
	DeployAll    = "all"
)
