package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
)

// jobStartAllowance is how long a Job's pod may take to be scheduled,
// pull the image and start, beyond the load's own length.
const jobStartAllowance = 3 * time.Minute

// Measure runs one load generator Job (or one per namespace) against the
// entry Service, samples resources while they run, and returns each
// generator's result and every component's series over the measured
// window: from the earliest generator's start to the latest's end. It
// stops, saying why, when the run loses the cluster's lease.
func (p *kubePlatform) Measure(ctx context.Context, spec infra.LoadSpec) (platform.Measurement, error) {
	if err := p.lostLease(); err != nil {
		return platform.Measurement{}, leaseErr(context.Background(), err)
	}
	ctx, done := p.held(ctx)
	defer done()
	m, err := p.measure(ctx, spec)
	return m, leaseErr(ctx, err)
}

func (p *kubePlatform) measure(ctx context.Context, spec infra.LoadSpec) (platform.Measurement, error) {
	var m platform.Measurement
	if p.workload == nil {
		return m, errors.New("kubernetes: measure before deploy: there is no workload to load")
	}
	if spec.Path == infra.PathIngress && (p.mesh == nil || !p.mesh.Plan.Ingress) {
		return m, errors.New("kubernetes: load path \"ingress\" needs the ingress gateway, which is installed with the mesh when the platform's Ingress option is set (a study with an ingress cell sets it); install a mesh (baseline included) first")
	}
	targets := p.namespaces[:1]
	if spec.PerNamespace {
		targets = p.namespaces
		if spec.Tenants > 0 && spec.Tenants < len(targets) {
			targets = targets[:spec.Tenants]
		}
	}
	// A run whose resources cannot be sampled is wasted: find out first.
	err := p.resourcesReachable(ctx)
	if least := infra.MinSamplesPerPhase * p.opts.SampleInterval; err == nil && spec.Options.Duration > 0 && spec.Options.Duration < least {
		return m, fmt.Errorf("kubernetes: a measured phase of %s is shorter than %d samples of the metrics source (one every %s): lengthen load.duration to at least %s", spec.Options.Duration, infra.MinSamplesPerPhase, p.opts.SampleInterval, least)
	}
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: resources: %w", err)
	}
	deadline := loadDeadline(spec.Options)
	res, err := requirements(spec.Resources)
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: generator resources: %w", err)
	}
	var specs []jobSpec
	suffix := strconv.FormatInt(time.Now().Unix()%1e6, 36)
	for i, ns := range targets {
		o := spec.Options
		// Each generator its own Poisson draw, not in step with the others.
		o.Seed = load.SubSeed(o.Seed, i)
		js := jobSpec{
			Namespace: ns, Name: "meshbench-load-" + suffix, Component: componentLoad,
			ServiceAccount: loadServiceAccount, Place: p.place(infra.NodeLoad),
			Deadline: deadline, LogDir: spec.LogDir, Resources: res,
		}
		o.URL = p.entryURL(ns)
		if spec.Path == infra.PathIngress {
			// From outside the mesh, through the gateway: every
			// generator runs in the unmeshed namespace, one per target.
			o.URL = p.ingressURL(p.mesh.Plan.Profile, ns)
			js.Namespace, js.Name, js.ServiceAccount = outsideNamespace, js.Name+"-"+ns, "default"
		}
		js.Load = o
		specs = append(specs, js)
	}
	podsBefore, err := p.watchedPods(ctx)
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: %w", err)
	}
	rec := p.newRecorder(p.watchedNamespaces())
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rec.run(rctx) }()
	p.log.Info("running load generators", "jobs", len(specs), "deadline", deadline)
	results, err := p.runJobs(ctx, specs)
	stop()
	<-done
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: %w", err)
	}
	podsAfter, err := p.watchedPods(ctx)
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: %w", err)
	}
	m.Faults = restartFaults(podsAfter, restartCounts(podsBefore))
	var loadPods []corev1.Pod
	for _, r := range results {
		loadPods = append(loadPods, *r.Pod)
		m.Generators = append(m.Generators, *r.Result)
		if m.Start.IsZero() || r.Result.Start.Before(m.Start) {
			m.Start = r.Result.Start
		}
		if r.Result.End.After(m.End) {
			m.End = r.Result.End
		}
	}
	src := rec.samples
	if p.opts.Prometheus != "" {
		src, err = p.prometheusSamples(ctx, p.watchedNamespaces(), m.Start, m.End)
		if err != nil {
			return m, fmt.Errorf("kubernetes: measure: resources: %w", err)
		}
	} else if rec.metricsErr != nil {
		return m, fmt.Errorf("kubernetes: measure: resources: %w", rec.metricsErr)
	}
	// The generators' own pods, which a short run can end between two
	// samples of the pod list.
	rec.addComponents(loadPods)
	m.Resources = rec.series(src, m.Start, m.End)
	// Saturation judged per load node, every generator there counted,
	// not per generator process alone.
	alloc, err := p.generatorNodes(ctx, results)
	if err != nil {
		return m, fmt.Errorf("kubernetes: measure: %w", err)
	}
	markSaturatedNodes(results, loadNodeCPU(m.Resources, alloc))
	for i, r := range results {
		m.Generators[i] = *r.Result
	}
	return m, nil
}

// loadDeadline bounds a generator Job: its warm-up and measured phase,
// plus time to start. A closed loop bounded by a request count has no
// known length; it gets the same allowance as a 10-minute run.
func loadDeadline(o load.Options) time.Duration {
	run := o.Duration
	if run == 0 && o.Requests > 0 && o.Rate > 0 {
		run = time.Duration(float64(o.Requests) / o.Rate * float64(time.Second))
	}
	if run == 0 {
		run = 10 * time.Minute
	}
	return o.Warmup + run + jobStartAllowance
}

// entryURL is the URL of a namespace's entry service, as a pod in that
// namespace calls it.
func (p *kubePlatform) entryURL(ns string) string {
	return p.entryBase(ns) + p.workload.Graph.EntryPath
}

// entryBase is the scheme and authority of a namespace's entry service.
func (p *kubePlatform) entryBase(ns string) string {
	return fmt.Sprintf("http://%s.%s:%d", p.workload.Graph.Entry, ns, p.entryPort())
}

// watchedNamespaces are those whose pods are measured: the workload's and
// the mesh's system namespaces.
func (p *kubePlatform) watchedNamespaces() []string {
	ns := append([]string{}, p.namespaces...)
	if p.mesh != nil {
		ns = append(ns, p.mesh.Plan.Namespaces...)
		ns = append(ns, installers[p.mesh.Plan.Profile.Mesh].watched...)
	}
	return ns
}

// resourcesReachable checks that the resource source answers: the metrics
// API, or the study's Prometheus.
func (p *kubePlatform) resourcesReachable(ctx context.Context) error {
	if p.opts.Prometheus == "" {
		pm, err := p.podMetrics(ctx, p.namespaces[0])
		// The metrics API says its resolution: the window each reading
		// averages over.
		for _, it := range pm.Items {
			p.opts.SampleInterval = max(p.opts.SampleInterval, it.Window.Duration)
		}
		return err
	}
	_, err := promRaw(ctx, p.opts.Prometheus, "up[1m]", time.Now())
	return err
}
