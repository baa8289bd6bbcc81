package platform

import (
	"context"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/topology"
)

// Platform is one place to run studies. Every blocking method takes a
// context and undoes its partial work when that context ends.
type Platform interface {
	// Info reports what the platform is and can do, for the result's
	// provenance and for the runner's checks.
	Info(ctx context.Context) (infra.Info, error)
	// Up brings the cluster up, or checks that an existing one has the
	// nodes and roles the spec asks for.
	Up(ctx context.Context, spec infra.ClusterSpec) error
	// Deploy makes the workload's pods and Services run and be ready,
	// replacing any workload deployed before.
	Deploy(ctx context.Context, w Workload) error
	// InstallMesh installs a mesh profile on the deployed workload and runs
	// its verification checks. A failed check is returned in the checks
	// and as an error.
	InstallMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error)
	// RemoveMesh removes what InstallMesh installed, leaving the workload.
	RemoveMesh(ctx context.Context) error
	// Measure runs the load generators (warm-up, then the measured phase)
	// and samples every component's CPU and memory over exactly the
	// measured window.
	Measure(ctx context.Context, spec infra.LoadSpec) (Measurement, error)
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

// Measurement is what one measured phase produced.
type Measurement struct {
	Start      time.Time        `json:"start"`
	End        time.Time        `json:"end"`
	Generators []load.Result    `json:"generators"`
	Resources  []metrics.Series `json:"resources"`
	// Replicas are the requests each app replica answered during the
	// measurement (warm-up included), where the platform can count them;
	// they show how a mesh spread requests over a Service's replicas.
	Replicas []infra.ReplicaRequests `json:"replicas,omitempty"`
	// Host is what the platform's CPUs did besides the study during the
	// measured phase; nil where the platform does not measure it (on
	// Kubernetes, other tenants' pods and the nodes' own daemons are not
	// seen).
	Host *infra.HostCPU `json:"host,omitempty"`
	// Faults say what broke during the measurement, one line each: a
	// proxy or app container that restarted or failed ("proxy restarted:
	// ns-1/front-0/istio-proxy"). A measurement with faults did not run
	// on the deployed data plane, and its cell fails.
	Faults []string `json:"faults,omitempty"`
	// Limits say what the load side ran out of that is its own, not the
	// system's, one line each: a load pod with no free local port left
	// for the check after the measurement. Its cell is distorted, and no
	// evidence for a search.
	Limits []string `json:"limits,omitempty"`
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
