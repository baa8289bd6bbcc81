package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// measureSeq names each Measure's generator containers uniquely.
var measureSeq atomic.Int64

// generator is one load generator of a measurement.
type generator struct {
	namespace string
	pod       string
	container string
	opts      load.Options
	out       bytes.Buffer
}

// Measure implements platform.Platform. Each generator is a `meshbench
// load --output json` container in a namespace's load pod; every
// component's CPU and memory is sampled throughout and cut to the measured
// window the generators report.
func (p *labPlatform) Measure(ctx context.Context, spec infra.LoadSpec) (platform.Measurement, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var m platform.Measurement
	l, err := p.running()
	if err != nil {
		return m, err
	}
	if p.wl == nil {
		return m, errors.New("measure: deploy the workload first")
	}
	bin, err := p.o.bin()
	if err != nil {
		return m, err
	}
	namespaces := p.wl.namespaces
	switch {
	case !spec.PerNamespace:
		namespaces = namespaces[:1]
	case spec.Tenants > 0 && spec.Tenants < len(namespaces):
		namespaces = namespaces[:spec.Tenants]
	}
	seq := measureSeq.Add(1)
	var gens []*generator
	for i, ns := range namespaces {
		u, err := p.targetURL(l, ns, spec.Path)
		if err != nil {
			return m, err
		}
		o := spec.Options
		o.URL = u
		// Each generator its own Poisson draw, not in step with the others.
		o.Seed = load.SubSeed(o.Seed, i)
		gens = append(gens, &generator{namespace: ns, pod: generatorPod(spec.Path), container: "load-" + strconv.FormatInt(seq, 10), opts: o})
	}
	// The host meter starts first: its CPU speed probe wants the lab idle,
	// before the replica counters are read.
	host := l.StartHostMeter()
	before := faultCounts(l.Pods())
	countsBefore := replicaCounts(ctx, l.Pods(), p.wl.w.Graph)
	sampler := l.StartSampler(cluster.DefaultSampleInterval)
	results, runErr := p.runGenerators(ctx, l, bin, spec.LogDir, gens)
	hostCPU, hostErr := host.Stop()
	sampler.Stop()
	m.Replicas = replicaDeltas(countsBefore, replicaCounts(ctx, l.Pods(), p.wl.w.Graph))
	m.Faults = faultsSince(l.Pods(), before)
	if p.msh != nil && p.msh.in != nil && runErr == nil {
		began := time.Now()
		faults, limits := reverify(ctx, p.msh.in)
		m.Faults, m.Limits = append(m.Faults, faults...), limits
		p.o.Logger.Debug("re-verified the mesh after the measurement", "took", time.Since(began), "faults", len(m.Faults), "limits", len(limits))
	}
	if !spec.LogDir.IsZero() {
		p.keepFaultyLogs(l, before, spec.LogDir)
	}
	if runErr != nil {
		return m, runErr
	}
	m.Generators = results
	m.Start, m.End = results[0].Start, results[0].End
	for _, r := range results[1:] {
		if r.Start.Before(m.Start) {
			m.Start = r.Start
		}
		if r.End.After(m.End) {
			m.End = r.End
		}
	}
	m.Resources = sampler.Window(m.Start, m.End)
	if hostErr != nil {
		p.o.Logger.Warn("host noise not measured", "err", hostErr)
	} else {
		m.Host = hostOf(hostCPU)
	}
	return m, nil
}

// reverify checks again, once the measurement is over and outside its
// window, that the installed mesh still holds; each check that fails is a
// fault, but for one whose probes could not be sent for the load side's
// own reason (its pod out of local ports), which is a limit: the mesh is
// not known to have failed, nor to hold.
func reverify(ctx context.Context, in *dataplane.Installation) (faults, limits []string) {
	for _, c := range in.Reverify(ctx) {
		switch {
		case c.Pass:
		case c.Unverified != "":
			limits = append(limits, fmt.Sprintf("the mesh could not be verified after the measurement: %s (%s)", c.Name, c.Detail))
		default:
			faults = append(faults, fmt.Sprintf("verification failed after the measurement: %s (%s)", c.Name, c.Detail))
		}
	}
	return faults, limits
}

// hostOf converts the lab's host-noise figures for the platform. The
// window is the generators' run, warm-up included: a little wider than
// the measured phase, which only makes the guard stricter.
func hostOf(h cluster.HostCPU) *infra.HostCPU {
	out := &infra.HostCPU{CPUs: h.CPUs, Noise: h.Noise(), Steal: h.Steal, Softirq: h.Softirq, Slowdown: h.Slowdown}
	for _, n := range h.Nodes {
		out.Nodes = append(out.Nodes, infra.NodeCPU{Name: n.Name, Role: infra.NodeRole(n.Role), CPUs: n.CPUs, Busy: n.Busy, Outside: n.Outside + n.Steal})
	}
	return out
}

// generatorPod is the pod a path's generators run in: the ingress path
// starts outside the mesh, in the namespace's outside client.
func generatorPod(path infra.LoadPath) string {
	if path == infra.PathIngress {
		return OutsidePodName
	}
	return LoadPodName
}

// targetURL is where a namespace's generator sends its load.
func (p *labPlatform) targetURL(l *cluster.Lab, ns string, path infra.LoadPath) (string, error) {
	g := p.wl.w.Graph
	switch path {
	case "", infra.PathService:
		svc, ok := l.Service(ns, g.Entry)
		if !ok {
			return "", fmt.Errorf("measure: no entry Service %s/%s", ns, g.Entry)
		}
		entryPath := g.EntryPath
		if entryPath == "" {
			entryPath = "/"
		}
		return "http://" + svc.Addr().String() + entryPath, nil
	case infra.PathIngress:
		if p.msh == nil {
			return "", errors.New("measure: the ingress path needs a mesh profile with an ingress gateway installed")
		}
		return p.msh.IngressURL(ns)
	}
	return "", fmt.Errorf("measure: unknown load path %q", path)
}

// runGenerators runs every generator at once and parses their results;
// with a logDir each one's standard error goes there. Their containers
// are removed whatever happens.
func (p *labPlatform) runGenerators(ctx context.Context, l *cluster.Lab, bin string, logDir confined.Dir, gens []*generator) ([]load.Result, error) {
	dir := filepath.Join(l.StateDir(), "load")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	errs := make([]error, len(gens))
	results := make([]load.Result, len(gens))
	var wg sync.WaitGroup
	for i, g := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = p.runGenerator(ctx, l, bin, dir, logDir, g)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	return results, nil
}

func (p *labPlatform) runGenerator(ctx context.Context, l *cluster.Lab, bin, dir string, logDir confined.Dir, g *generator) (load.Result, error) {
	var res load.Result
	argv, err := generatorCommand(bin, g.opts, filepath.Join(dir, g.namespace+"-body"))
	if err != nil {
		return res, err
	}
	// The apps' user, with no capability: a generator needs no privilege
	// (the shim sets its open-file limit before it drops to that user),
	// and root with none could still write any file root owns.
	c := cluster.ContainerSpec{Name: g.container, Command: argv, Role: metrics.RoleLoad, Restart: cluster.RestartNever, Stdout: &g.out,
		UID: AppUID, GID: AppUID}
	// Without a log directory the generator writes to the load pod's log.
	where := l.LogPath(g.namespace, g.pod)
	code := -1
	if !logDir.IsZero() {
		glog, err := openGeneratorLog(logDir, g.namespace, argv)
		if err != nil {
			return res, fmt.Errorf("measure: %w", err)
		}
		// Deferred first, so it runs once the container is removed.
		defer func() {
			if err := glog.close(code); err != nil {
				p.o.Logger.Warn("keep a generator's log", "err", err)
			}
		}()
		c.Stderr, where = glog, glog.path
	}
	if err := l.AddContainer(ctx, g.namespace, g.pod, c); err != nil {
		return res, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.RemoveContainer(rctx, g.namespace, g.pod, g.container)
	}()
	code, err = l.WaitContainer(ctx, g.namespace, g.pod, g.container)
	if err != nil {
		code = -1
		return res, fmt.Errorf("generator in %s: %w", g.namespace, err)
	}
	r, perr := load.ReadResult(bytes.NewReader(g.out.Bytes()))
	if perr != nil {
		return res, fmt.Errorf("generator in %s exited %d without a result (see %s): %w", g.namespace, code, where, perr)
	}
	return *r, nil
}

// generatorCommand is a generator's command: bin running load.Args, the
// body written to bodyFile.
func generatorCommand(bin string, o load.Options, bodyFile string) ([]string, error) {
	if !strings.HasPrefix(o.URL, "http") {
		return nil, fmt.Errorf("measure: target URL %q is not http(s)", o.URL)
	}
	if len(o.Body) > 0 {
		if err := os.WriteFile(bodyFile, o.Body, 0o644); err != nil {
			return nil, fmt.Errorf("measure: write request body: %w", err)
		}
	}
	return append([]string{bin}, load.Args(o, bodyFile)...), nil
}
