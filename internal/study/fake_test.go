package study

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// fakePlatform records the runner's calls and answers Measure with
// synthetic results in real histograms: every generator completes
// rate x window requests, at a latency set per mesh profile.
type fakePlatform struct {
	mu    sync.Mutex
	calls []string

	rate        float64                  // requests per second each generator completes
	rates       map[string]float64       // by profile, overriding rate in closed loop
	latency     map[string]time.Duration // by profile; default 1ms
	failInstall map[string]error         // by profile
	failDeploy  error
	distorted   map[string]bool // by profile
	// failing, by profile, is the share of requests that get a 503 after
	// failFast; the others take the profile's latency.
	failing map[string]float64
	// faults, by profile, are the measurement's faults on the nth
	// measurement (from 1); nil for none.
	faults func(profile string, n int) []string
	// capacity, by profile, makes an open loop's p99 rise with the total
	// rate as an M/M/1 queue's does, ln(100) / (capacity - rate), and the
	// app's CPU 0.1 cores idle plus 1 core per 1000 req/s.
	capacity map[string]float64
	// saturateAbove marks every generator CPU-saturated above this total
	// rate.
	saturateAbove float64
	// portsFor, when set, is how many connections a generator can open
	// before its connects fail with EADDRNOTAVAIL: each request past
	// that share of its connections fails so, as the engine records it.
	portsFor int
	// limits, when set, are the nth measurement's Limits.
	limits func(profile string, n int) []string
	// latencyAt, when set, gives the latency of the nth measurement of a
	// profile, over latency.
	latencyAt func(profile string, n int) time.Duration
	// host, when set, gives the nth measurement's host CPU figures.
	host func(profile string, n int) *infra.HostCPU
	// onMeasure runs before each Measure with its count from 1; an error
	// is returned by Measure.
	onMeasure func(n int) error

	// proxyCost, when set, makes a closed loop CPU-bound on one app CPU:
	// its rate is 1 / (appOwn + the deployed graph's work per request +
	// the profile's proxy cost), all in CPU time per request. deployed
	// holds each deployment's work per request.
	proxyCost map[string]time.Duration
	appOwn    time.Duration

	mesh       string
	namespaces int           // of the deployed workload
	work       time.Duration // the deployed graph's work per request
	deployed   []time.Duration
	measures   int
	logDirs    []confined.Dir // each Measure's spec.LogDir
	// writeLogs makes Measure write a generator's log into its LogDir,
	// and Down a pod's log into the directory open was given, as the
	// platforms do.
	writeLogs bool
	podLogs   confined.Dir
	info      func(*infra.Info) // edits what Info reports, when set
}

func newFake() *fakePlatform {
	return &fakePlatform{rate: 1000, rates: map[string]float64{}, latency: map[string]time.Duration{}, failInstall: map[string]error{}, distorted: map[string]bool{}, capacity: map[string]float64{}}
}

func (f *fakePlatform) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// count returns how many recorded calls start with prefix.
func (f *fakePlatform) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (f *fakePlatform) open(ctx context.Context, p Platform, log *slog.Logger, podLogDir confined.Dir) (platform.Platform, error) {
	f.record("open %s %s", p.Type, podLogDir.Path())
	f.podLogs = podLogDir
	return f, nil
}

func (f *fakePlatform) Info(ctx context.Context) (infra.Info, error) {
	in := infra.Info{Name: "fake", Host: "bench-1", Kernel: "6.1.0-test", CPUModel: "Test CPU", CPUs: 2, EnvoyVersion: "1.40.0"}
	if f.info != nil {
		f.info(&in)
	}
	return in, nil
}

func (f *fakePlatform) Up(ctx context.Context, spec infra.ClusterSpec) error {
	f.record("up %d", len(spec.Nodes))
	return nil
}

func (f *fakePlatform) Deploy(ctx context.Context, w platform.Workload) error {
	f.record("deploy ns=%d replicas=%v", w.Namespaces, w.Replicas)
	f.mu.Lock()
	f.namespaces = w.Namespaces
	f.work = workPerRequest(w.Graph, w.Replicas)
	f.deployed = append(f.deployed, f.work)
	f.mu.Unlock()
	return f.failDeploy
}

func (f *fakePlatform) InstallMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	f.record("install %s", m.Profile)
	if err := f.failInstall[m.Profile]; err != nil {
		return []mesh.Check{{Name: "pods-meshed", Pass: false, Detail: err.Error()}}, err
	}
	f.mesh = m.Profile
	return []mesh.Check{
		{Name: "mesh-config", Pass: true, Detail: "profile " + m.Profile + ", envoy 1.40.0, 3 proxies, bootstrap sha256 0123456789abcdef", ConfigHash: "0123456789abcdef"},
		{Name: "pods-meshed", Pass: true},
	}, nil
}

func (f *fakePlatform) RemoveMesh(ctx context.Context) error {
	f.record("remove")
	f.mesh = ""
	return nil
}

func (f *fakePlatform) Measure(ctx context.Context, spec infra.LoadSpec) (platform.Measurement, error) {
	f.mu.Lock()
	f.measures++
	n := f.measures
	f.logDirs = append(f.logDirs, spec.LogDir)
	f.mu.Unlock()
	f.record("measure %s rate=%g", f.mesh, spec.Options.Rate)
	if f.onMeasure != nil {
		if err := f.onMeasure(n); err != nil {
			return platform.Measurement{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return platform.Measurement{}, err
	}
	if f.writeLogs {
		if err := spec.LogDir.WriteFile("load-ns-1.log", []byte("a generator's log\n")); err != nil {
			return platform.Measurement{}, err
		}
	}
	rate := f.rate
	if r, ok := f.rates[f.mesh]; ok && spec.Options.Rate == 0 {
		rate = r
	}
	if c, ok := f.proxyCost[f.mesh]; ok && spec.Options.Rate == 0 {
		rate = 1 / (f.appOwn + f.work + c).Seconds()
	}
	window := spec.Options.Duration
	if window == 0 {
		window = time.Duration(float64(spec.Options.Requests) / rate * float64(time.Second))
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(n) * time.Minute)
	lat := f.latency[f.mesh]
	if f.latencyAt != nil {
		lat = f.latencyAt(f.mesh, n)
	}
	if lat == 0 {
		lat = time.Millisecond
	}
	gens := 1
	switch {
	case spec.PerNamespace && spec.Tenants > 0:
		gens = spec.Tenants
	case spec.PerNamespace && f.namespaces == 1:
		gens = 1
	case spec.PerNamespace:
		gens = 2
	}
	f.record("generators %d", gens)
	total := spec.Options.Rate * float64(gens)
	appCPU := 0.5
	if mu, ok := f.capacity[f.mesh]; ok && spec.Options.Rate > 0 {
		rate, lat = spec.Options.Rate, 10*time.Second
		if total < mu {
			lat = time.Duration(math.Log(100) / (mu - total) * float64(time.Second))
		}
		appCPU = 0.1 + total/1000
	}
	m := platform.Measurement{Start: start, End: start.Add(window)}
	if f.faults != nil {
		m.Faults = f.faults(f.mesh, n)
	}
	if f.host != nil {
		m.Host = f.host(f.mesh, n)
	}
	if f.limits != nil {
		m.Limits = f.limits(f.mesh, n)
	}
	for range gens {
		h := metrics.NewHistogram()
		reqs := int64(rate * window.Seconds())
		failed := int64(f.failing[f.mesh] * float64(reqs))
		h.RecordN(lat, reqs-failed)
		r := load.Result{
			Options: spec.Options, Start: start, End: start.Add(window), Requests: reqs, AchievedRate: rate,
			StatusCodes: map[int]int64{200: reqs - failed}, Latency: h, SendLag: metrics.NewHistogram(),
			ByClass: map[string]*metrics.Histogram{"2xx": h},
		}
		if failed > 0 {
			// As the load engine records them: counted and timed by
			// class, kept out of Latency.
			fh := metrics.NewHistogram()
			fh.RecordN(failFast, failed)
			r.StatusCodes[503], r.ByClass["5xx"] = failed, fh
		}
		if c := spec.Options.Connections; f.portsFor > 0 && c > f.portsFor {
			// The requests of the connections past the ports fail at
			// once, counted by kind and kept out of Latency.
			noPort := reqs * int64(c-f.portsFor) / int64(c)
			r.StatusCodes[200] -= noPort
			h.Reset()
			h.RecordN(lat, r.StatusCodes[200])
			eh := metrics.NewHistogram()
			eh.RecordN(failFast, noPort)
			r.Errors, r.ErrorKinds, r.ByClass["error"] = noPort, map[string]int64{load.KindNoPort: noPort}, eh
			r.Distorted = true
		}
		if f.distorted[f.mesh] {
			r.Distorted, r.Warnings = true, []string{"sent 80% of the target rate"}
		}
		if f.saturateAbove > 0 && total > f.saturateAbove {
			r.ClientCores, r.ClientCPU, r.Distorted = 1, window, true
		}
		m.Generators = append(m.Generators, r)
	}
	m.Resources = []metrics.Series{{
		Component: metrics.Component{Role: metrics.RoleApp, Node: "app", Namespace: "ns-1", Pod: "front-0", Container: "app"},
		Samples:   []metrics.Sample{{Time: start, CPUCores: appCPU, WorkingSet: 10 << 20}},
	}}
	return m, nil
}

func (f *fakePlatform) Down(ctx context.Context) error {
	f.record("down")
	if f.writeLogs {
		return f.podLogs.WriteFile("ns-1_app.log", []byte("a pod's log\n"))
	}
	return nil
}

// failFast is how long a failing request of the fake takes.
const failFast = 100 * time.Microsecond

var errInstall = errors.New("istiod never became ready")
