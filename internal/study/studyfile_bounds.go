package study

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

// Bounds on every size a study can set, checked when it is read (a study
// can come from a results directory someone else wrote): past them a
// study cannot run on the lab or on a real cluster, or runs past what
// meshbench's results hold. The graph's own bounds are topology's.
const (
	// MaxNamespaces is Kubernetes's scalability threshold of namespaces
	// in a cluster; the largest published study ran 50 tenants.
	MaxNamespaces = 10000
	// MaxPods and MaxPodsPerNamespace are Kubernetes's thresholds of
	// pods in a cluster and in one namespace.
	MaxPods             = 150000
	MaxPodsPerNamespace = 3000
	// MaxLabPodsPerNode: each lab node's pods take addresses of the
	// node's own /24, 253 of them, a few kept for the mesh's pods on the
	// node (its node proxy, a waypoint, the gateway).
	MaxLabPodsPerNode = 250
	// MaxLabNodes is the lab's address plan's (a node's index is a byte
	// of its addresses); MaxClusterNodes is Kubernetes's threshold.
	MaxLabNodes     = 250
	MaxClusterNodes = 5000
	// MaxConnections bounds a generator's connections: each takes a
	// local port of its own to the one Service address, and a lab load
	// pod has 64,411 (1024-65535, less the proxies' 15000-15100).
	MaxConnections = 64000
	// MaxRate bounds a generator's open-loop rate: ten million requests
	// a second is a typing error, not a load one process can send.
	MaxRate = 1e7
	// MaxRequests bounds a closed loop's requests: an hour at 280,000 a
	// second.
	MaxRequests = 1_000_000_000
	// MaxPhase bounds a measured phase and a warm-up. A cell measures
	// one steady state, and a soak is its repetitions: a lab cell samples
	// every container twice a second, and an hour of 360 containers is
	// what a results directory's cell file may hold
	// (results.MaxCellBytes).
	MaxPhase = topology.Duration(time.Hour)
	// MaxTimeout bounds a request's timeout: Envoy's route timeout is 15 s
	// by default, and a call of five minutes is a batch job.
	MaxTimeout = topology.Duration(5 * time.Minute)
	// MaxRepetitions bounds a cell's rounds: rigorous designs
	// (Kalibera and Jones) run a few tens.
	MaxRepetitions = 100
	// MaxCells bounds a study's cells (points of its sweeps, meshes and
	// repetitions), 30 times the largest built-in study's 315; the index
	// of a results directory holds them (results.MaxIndexBytes).
	MaxCells = 10000
	// MaxWorkers bounds a proxy's worker threads, more than any node's
	// cores.
	MaxWorkers = 1024
	// MaxSearchTrials and MaxRetries bound a capacity search's counts
	// (max_trials and trials, defaults 40 and 10; retries, default 2), and
	// MaxBudget its measured time per mesh.
	MaxSearchTrials = 1000
	MaxRetries      = 100
	MaxBudget       = topology.Duration(24 * time.Hour)
	// MaxClusterWait bounds a wait for readiness on Kubernetes (default
	// 5m), and MaxSampleInterval the metrics' resolution (default 15s).
	MaxClusterWait    = topology.Duration(time.Hour)
	MaxSampleInterval = topology.Duration(5 * time.Minute)
)

// tooMany is the message for n past bound, with what the bound is.
func tooMany[T int | int64 | float64](n, bound T, what string) error {
	return fmt.Errorf("%v, more than the %v %s", n, bound, what)
}

func tooLong(d, bound topology.Duration, what string) error {
	return fmt.Errorf("%s, more than the %s %s", d, bound, what)
}

// Checks of one value each, shared by a study's own fields and its
// sweeps' values.
func checkNamespaces(n int) error {
	if n > MaxNamespaces {
		return tooMany(n, MaxNamespaces, "namespaces a workload may have (Kubernetes's scalability threshold)")
	}
	return nil
}

func checkConnections(n int) error {
	if n > MaxConnections {
		return tooMany(n, MaxConnections, "connections a generator may hold (each takes a local port to the one Service address)")
	}
	return nil
}

func checkRate(r float64) error {
	if r > MaxRate {
		return fmt.Errorf("%g requests a second, more than the %g a generator may be asked for", r, float64(MaxRate))
	}
	return nil
}

func checkRequests(n int64) error {
	if n > MaxRequests {
		return tooMany(n, int64(MaxRequests), "requests a measured phase may send")
	}
	return nil
}

func checkPhase(d topology.Duration, what string) error {
	if d > MaxPhase {
		return tooLong(d, MaxPhase, what)
	}
	return nil
}

// at adds err, when there is one, as the error of the field at path.
func (es *FieldErrors) at(path string, err error) {
	if err != nil {
		*es = append(*es, asFieldError(fieldError(path, "%v", err)))
	}
}

// validateSizes checks the study's sizes that are not the load's (which
// Load.validate checks, as for every cell).
func (s *Study) validateSizes() FieldErrors {
	var errs FieldErrors
	add := errs.at
	add("workload.namespaces", checkNamespaces(s.Workload.Namespaces))
	if s.Graph != nil {
		for _, svc := range slices.Sorted(maps.Keys(s.Workload.Replicas)) {
			if err := s.Graph.CheckReplicas("workload.replicas."+svc, svc, s.Workload.Replicas[svc]); err != nil {
				errs = append(errs, asFieldError(graphError(err)))
			}
		}
		if len(errs) == 0 {
			add("workload.namespaces", s.checkPods(s.baseSetting()))
		}
	}
	if r := s.Repetitions; r.Max > MaxRepetitions {
		add("repetitions", fmt.Errorf("max %d, more than the %d rounds a cell may have", r.Max, MaxRepetitions))
	}
	for i, m := range s.Meshes {
		if m.Workers > MaxWorkers {
			add(fmt.Sprintf("meshes[%d].workers", i), tooMany(m.Workers, MaxWorkers, "worker threads a proxy may have"))
		}
		if m.WaypointReplicas > topology.MaxEndpoints {
			add(fmt.Sprintf("meshes[%d].waypoint_replicas", i), tooMany(m.WaypointReplicas, topology.MaxEndpoints, "pods a service may have (Kubernetes's threshold of endpoints per service)"))
		}
	}
	switch n := len(s.Platform.Nodes); {
	case s.Platform.Type == PlatformLab && n > MaxLabNodes:
		add("platform.nodes", fmt.Errorf("%d nodes, more than the lab's %d (a node's index is a byte of its addresses)", n, MaxLabNodes))
	case n > MaxClusterNodes:
		add("platform.nodes", fmt.Errorf("%d nodes, more than the %d of Kubernetes's scalability threshold", n, MaxClusterNodes))
	}
	if sc := s.Scaling; sc != nil {
		add("scaling.min_requests", checkRequests(sc.MinRequests))
		add("scaling.measure", checkPhase(sc.Measure, "a measured phase may last"))
		add("scaling.warmup", checkPhase(sc.Warmup, "a warm-up may last"))
	}
	if k := s.Platform.Kubernetes; k != nil {
		if k.Timeout > MaxClusterWait {
			add("platform.kubernetes.timeout", tooLong(k.Timeout, MaxClusterWait, "a wait for readiness may last"))
		}
		if k.SampleInterval > MaxSampleInterval {
			add("platform.kubernetes.sample_interval", tooLong(k.SampleInterval, MaxSampleInterval, "between samples of CPU and memory"))
		}
	}
	if sr := s.Search; sr != nil {
		errs = append(errs, sr.validateSizes()...)
	}
	return errs
}

func (sr *Search) validateSizes() FieldErrors {
	var errs FieldErrors
	add := errs.at
	if sr.MaxTrials > MaxSearchTrials {
		add("search.max_trials", tooMany(sr.MaxTrials, MaxSearchTrials, "trials a search may run per mesh"))
	}
	if sr.Trials > MaxSearchTrials {
		add("search.trials", tooMany(sr.Trials, MaxSearchTrials, "locating trials a search may run per mesh"))
	}
	if sr.Retries > MaxRetries {
		add("search.retries", tooMany(sr.Retries, MaxRetries, "re-runs a trial may have"))
	}
	if sr.Budget > MaxBudget {
		add("search.budget", tooLong(sr.Budget, MaxBudget, "of trials a search may measure per mesh"))
	}
	add("search.trial", checkPhase(sr.Trial, "a trial may last"))
	add("search.start_connections", checkConnections(sr.StartConnections))
	add("search.max_connections", checkConnections(sr.MaxConnections))
	add("search.start_rate", checkRate(sr.StartRate))
	add("search.max_rate", checkRate(sr.MaxRate))
	add("search.per_connection_rate", checkRate(sr.PerConnectionRate))
	return errs
}

// checkCells refuses sweeps whose cells would be more than MaxCells,
// from the counts alone: their cross product is never listed past it.
func (s *Study) checkCells(axes []axis) error {
	points := 1
	for _, a := range axes {
		points *= len(a.rows)
		if points > MaxCells {
			break
		}
	}
	cells := points * max(len(s.Meshes), 1) * max(s.Repetitions.Max, 1)
	if points > MaxCells || cells > MaxCells {
		what := fmt.Sprintf("%d cells (%d points, %d meshes, %d repetitions)", cells, points, len(s.Meshes), s.Repetitions.Max)
		if points > MaxCells {
			what = fmt.Sprintf("more than %d points", MaxCells)
		}
		return fieldError("sweeps", "%s, more than the %d cells a study may have", what, MaxCells)
	}
	return nil
}

// checkPods refuses a setting whose workload the platform cannot hold:
// on Kubernetes, past its thresholds of pods in a cluster and in a
// namespace; on the lab, more pods on a node than its addresses.
func (s *Study) checkPods(st setting) error {
	w := platform.Workload{Graph: graphVariant(s.Graph, st.Payload, st.Protocol, st.Fanout), Namespaces: 1, Replicas: st.Replicas}
	perNS := w.Pods()
	ns := s.deployedNamespaces(st)
	pods := perNS * ns
	what := fmt.Sprintf("%d pods (%d namespaces of %d)", pods, ns, perNS)
	if s.Platform.Type == PlatformKubernetes {
		switch {
		case perNS > MaxPodsPerNamespace:
			return fmt.Errorf("%d pods in a namespace, more than the %d of Kubernetes's scalability threshold", perNS, MaxPodsPerNamespace)
		case pods > MaxPods:
			return fmt.Errorf("%s, more than the %d of Kubernetes's scalability threshold", what, MaxPods)
		}
		return nil
	}
	app, load := 0, 0
	for _, n := range s.Platform.Nodes {
		switch n.Role {
		case infra.NodeApp:
			app++
		case infra.NodeLoad:
			load++
		}
	}
	app = max(app, 1)
	perNode := (pods + app - 1) / app
	if load == 0 {
		perNode += (ns + app - 1) / app // the load pods share the app nodes
	}
	if perNode > MaxLabPodsPerNode {
		return fmt.Errorf("%s, more than the %d the lab's %d app node(s) hold (each lab node's pods take addresses of its own /24)", what, MaxLabPodsPerNode*app, app)
	}
	return nil
}

// deployedNamespaces is how many namespaces a setting deploys: on the
// lab, tenant scaling with deploy loaded deploys only the most loaded.
func (s *Study) deployedNamespaces(st setting) int {
	if sc := s.Scaling; sc != nil && s.Platform.Type == PlatformLab && len(sc.Tenants) > 0 && sc.Deploy == DeployLoaded {
		return min(st.Namespaces, slices.Max(sc.Tenants))
	}
	return st.Namespaces
}

// graphMessage is a graph's error without its field, for a sweep's value
// that the sweep's own path names.
func graphMessage(err error) error {
	var fe *topology.FieldError
	if errors.As(err, &fe) {
		return errors.New(fe.Msg)
	}
	return err
}

// graphError is a graph's error at a study's field, its path the study's.
func graphError(err error) error {
	var fe *topology.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe.Path, "%s", fe.Msg)
	}
	return err
}
