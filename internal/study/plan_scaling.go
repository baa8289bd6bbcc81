package study

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// Calibration measures each mesh's capacity with a short closed loop of
// about calibrationConnections connections in all: enough to saturate a
// small machine, few enough not to measure the generator's own limits.
// Its warm-up lasts calibrationWarmup, or longer while the throughput
// still rises, up to calibrationWarmupMax: a freshly installed proxy can
// serve far below its rate for a while (on an emulated CPU, ten times
// below it for tens of seconds), and a capacity read off that warm-up
// would scale every cell's load down to nearly nothing.
const (
	calibrationConnections = 64
	calibrationDuration    = 5 * time.Second
	calibrationWarmup      = 2 * time.Second
	calibrationWarmupMax   = 30 * time.Second
)

// ScalingFor says how the study's load will be scaled: by factor when it is
// positive; calibrated when the study runs on the lab and has a scaling
// section (the runner then measures the factor); not at all
// otherwise, for a Kubernetes cluster runs a study at its written size.
func (s *Study) ScalingFor(factor float64) results.Scaling {
	switch {
	case factor > 0:
		return results.Scaling{Mode: results.ScaleFactor, Factor: factor,
			Note: "open-loop rates, their connections and request counts multiplied by the factor given with --scale"}
	case s.Scaling != nil && s.Platform.Type == PlatformLab && len(s.Scaling.Tenants) > 0:
		return results.Scaling{Mode: results.ScaleTenants, Fraction: s.Scaling.Fraction, Tenants: slices.Clone(s.Scaling.Tenants),
			StudyTenants: s.Workload.Namespaces, Deployed: s.Scaling.Deploy, PublishedRate: s.Load.Rate}
	case s.Scaling != nil && s.Platform.Type == PlatformLab:
		return results.Scaling{Mode: results.ScaleCalibrated, Fraction: s.Scaling.Fraction}
	}
	return results.Scaling{Mode: results.ScaleNone, Factor: 1}
}

// scaleLoad applies a scaling to one cell's load. Open-loop rates and
// request counts are multiplied by the factor; a scaled run (calibrated,
// or by a factor given with --scale, which stands in for a calibration's:
// a run at another run's factor is that run's load) also caps the
// measured phase and warm-up at the study's scaling limits. A scaled
// open loop also scales down its connections (at least one), so that each
// connection carries the rate it carried in the study: 100 connections at
// a thousandth of the rate would make nearly every request a cold
// connection, a load model the study never had. The workload and a closed
// loop's connections stay as written.
func (s *Study) scaleLoad(l Load, sc results.Scaling) Load {
	if sc.Mode == results.ScaleNone {
		return l
	}
	if sc.Mode == results.ScaleTenants {
		// The tenant keeps its connections and protocol; only a rate
		// that would overload the lab is lowered.
		if sc.TenantRate > 0 && l.Rate > 0 {
			l.Rate = sc.TenantRate
		}
	} else if f := sc.Factor; f > 0 {
		if l.Rate > 0 && f < 1 {
			l.Connections = max(1, int(math.Ceil(float64(l.Connections)*f)))
		}
		l.Rate = math.Round(l.Rate*f*100) / 100
		if l.Requests > 0 {
			l.Requests = max(int64(l.Connections), int64(math.Round(float64(l.Requests)*f)))
		}
	}
	if sc.Mode != results.ScaleNone && s.Scaling != nil {
		if l.Duration > s.Scaling.Measure {
			l.Duration = s.Scaling.Measure
		}
		if l.Warmup > s.Scaling.Warmup {
			l.Warmup = s.Scaling.Warmup
		}
	}
	if s.Scaling != nil && s.Scaling.MinRequests > 0 && l.Rate > 0 && l.Duration > 0 {
		// Whole seconds, so that cell plans print plainly.
		need := time.Duration(math.Ceil(float64(s.Scaling.MinRequests)/l.Rate)) * time.Second
		if time.Duration(l.Duration) < need {
			l.Duration = topology.Duration(need)
		}
	}
	return l
}

// calibrationCell is the measurement that finds a mesh's capacity: the
// first workload shape, closed loop, with the study's path, generators,
// keep-alive and protocol.
func (s *Study) calibrationCell(m Mesh) (Cell, error) {
	axes, err := s.axes()
	if err != nil {
		return Cell{}, err
	}
	pts, err := s.points(axes)
	if err != nil {
		return Cell{}, err
	}
	pt := pts[0]
	if sc := s.ScalingFor(0); sc.Mode == results.ScaleTenants {
		pt = s.withTenants(pt, slices.Min(sc.Tenants))
	}
	l := pt.setting.Load
	conns := max(1, calibrationConnections/pt.setting.generators())
	if l.Rate == 0 && l.Connections > 0 {
		// A closed-loop study saturates at its own concurrency: more
		// connections than it uses only lengthen each request, which on
		// an app that costs tens of ms can outlast the request timeout.
		conns = min(conns, l.Connections)
	}
	l.Rate, l.Requests, l.Connections = 0, 0, conns
	l.Duration, l.Warmup = topology.Duration(calibrationDuration), topology.Duration(calibrationWarmup)
	if s.Scaling != nil && s.Scaling.CalibrateWork && s.Scaling.Measure > l.Duration {
		// The app's cost is read off the capacities' ratios, a few
		// percent apart: a 5-second closed loop of an app costing tens of
		// ms a request completes too few requests to tell them apart.
		l.Duration = s.Scaling.Measure
	}
	pt.setting.Load = l
	c := s.cell(m, 1, 1, pt, results.Scaling{Mode: results.ScaleNone})
	c.ID = "calibration-" + m.Name
	c.Load.Options.WarmupMax = calibrationWarmupMax
	return c, nil
}

// calibrate sets the factor from the meshes' measured capacities, in
// requests per second. The reference is the slowest mesh, so that every
// mesh runs below saturation and latencies compare: open-loop rates offer
// the study's fraction of its capacity in total at the highest-rate cell,
// and closed-loop request counts shrink so that the largest takes about
// the scaling's measure time at that capacity. The factor never exceeds
// 1: scaling only shrinks a study.
func (s *Study) calibrate(sc results.Scaling, caps map[string]float64) (results.Scaling, error) {
	if sc.Mode == results.ScaleTenants {
		return s.calibrateTenants(sc, caps)
	}
	sc.Capacities = map[string]float64{}
	for name, c := range caps {
		sc.Capacities[name] = math.Round(c*10) / 10
		if c > 0 && (sc.Reference == "" || c < caps[sc.Reference] || c == caps[sc.Reference] && name < sc.Reference) {
			sc.Reference = name
		}
	}
	for _, m := range s.calibrationMeshes() {
		if m.Profile == BaselineProfile && sc.BaselineCapacity == 0 {
			sc.BaselineCapacity = sc.Capacities[m.Name]
		}
	}
	if sc.Reference == "" {
		return sc, fmt.Errorf("calibration: no mesh served a request, so no capacity is known; check the workload, or give --scale")
	}
	capacity := caps[sc.Reference]
	axes, err := s.axes()
	if err != nil {
		return sc, err
	}
	pts, err := s.points(axes)
	if err != nil {
		return sc, err
	}
	var offered, requests float64
	for _, pt := range pts {
		offered = max(offered, pt.setting.Load.Rate*float64(pt.setting.generators()))
		requests = max(requests, float64(pt.setting.Load.Requests))
	}
	f := 1.0
	if offered > 0 {
		f = min(f, sc.Fraction*capacity/offered)
		sc.PublishedRate = offered
		sc.Rate = math.Round(offered*f*100) / 100
		sc.Note = fmt.Sprintf("open-loop rates (and their connections) scaled to offer %.0f%% of the capacity of the slowest mesh, %s (%.1f req/s)", 100*sc.Fraction, sc.Reference, capacity)
	}
	if requests > 0 {
		f = min(f, capacity*s.Scaling.Measure.D().Seconds()/requests)
		sc.Note = joinNote(sc.Note, fmt.Sprintf("request counts scaled so that the largest (%.0f) takes about %s at the capacity of the slowest mesh, %s (%.1f req/s)", requests, s.Scaling.Measure, sc.Reference, capacity))
	}
	sc.Factor = f
	sc.Note = joinNote(sc.Note, fmt.Sprintf("measured phases capped at %s and warm-ups at %s", s.Scaling.Measure, s.Scaling.Warmup))
	if s.Scaling.MinRequests > 0 {
		sc.Note = joinNote(sc.Note, fmt.Sprintf("open-loop measured phases lengthened, past that cap if need be, to at least %d requests each", s.Scaling.MinRequests))
	}
	sc.Note = joinNote(sc.Note, s.sharedCPUs())
	return sc, nil
}

// calibrateTenants sets each loaded tenant's rate: the study's own, unless
// the largest tenant count at that rate would offer more than the
// scaling's fraction of the slowest mesh's capacity (measured with the
// smallest count loaded), and then as much as that fraction allows. The
// fraction stands for the app node's CPU utilization: at closed-loop
// capacity the app node is saturated.
func (s *Study) calibrateTenants(sc results.Scaling, caps map[string]float64) (results.Scaling, error) {
	sc.Capacities = map[string]float64{}
	for name, c := range caps {
		sc.Capacities[name] = math.Round(c*10) / 10
		if c > 0 && (sc.Reference == "" || c < caps[sc.Reference] || c == caps[sc.Reference] && name < sc.Reference) {
			sc.Reference = name
		}
	}
	if sc.Reference == "" {
		return sc, fmt.Errorf("calibration: no mesh served a request, so no capacity is known; check the workload, or give --scale")
	}
	capacity := caps[sc.Reference]
	most, least := slices.Max(sc.Tenants), slices.Min(sc.Tenants)
	sc.TenantRate = sc.PublishedRate
	if limit := sc.Fraction * capacity * float64(least) / float64(most); sc.TenantRate <= 0 || sc.TenantRate > limit {
		sc.TenantRate = math.Floor(limit*100) / 100
		sc.RateLowered = sc.PublishedRate > 0
	}
	sc.Rate = sc.TenantRate * float64(most)
	if sc.PublishedRate > 0 {
		sc.Factor = sc.TenantRate / sc.PublishedRate
	}
	sc.Note = fmt.Sprintf("%s of the study's %d tenants loaded, each with the study's connections and protocol", tenantsText(sc.Tenants), sc.StudyTenants)
	if sc.RateLowered {
		sc.Note = joinNote(sc.Note, fmt.Sprintf("each tenant's rate lowered from the study's %.0f to %.2f req/s, so that %d tenants offer %.0f%% of the capacity of the slowest mesh, %s (%.1f req/s with %d loaded): what compares is per-request latency at a utilization like the study's, not at its absolute rate",
			sc.PublishedRate, sc.TenantRate, most, 100*sc.Fraction, sc.Reference, capacity, least))
	}
	sc.Note = joinNote(sc.Note, fmt.Sprintf("measured phases capped at %s and warm-ups at %s", s.Scaling.Measure, s.Scaling.Warmup))
	sc.Note = joinNote(sc.Note, s.sharedCPUs())
	return sc, nil
}

// sharedCPUs says, when the lab's app node shares CPUs with a node that
// runs load generators, which and why; "" when it does not.
func (s *Study) sharedCPUs() string {
	var app infra.NodeSpec
	for _, n := range s.Platform.Nodes {
		if n.Role == infra.NodeApp {
			app = n
		}
	}
	appCPUs, err := infra.ParseCPUList(app.CPUs)
	if app.CPUs == "" || err != nil {
		return ""
	}
	for _, n := range s.Platform.Nodes {
		if n.Role != infra.NodeLoad || n.CPUs == "" {
			continue
		}
		cpus, err := infra.ParseCPUList(n.CPUs)
		if err != nil || !slices.ContainsFunc(cpus, func(c int) bool { return slices.Contains(appCPUs, c) }) {
			continue
		}
		why := ""
		if m := s.Scaling.minAppCPUs(); m > 0 {
			why = fmt.Sprintf(", so that the graph's parallel calls run in parallel as on the study's many nodes (scaling.min_app_cpus %d)", m)
		}
		return fmt.Sprintf("the app node runs on CPUs %s, sharing CPUs %s with the load node (%s)%s", app.CPUs, n.CPUs, n.Name, why)
	}
	return ""
}

func tenantsText(ks []int) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, strconv.Itoa(k))
	}
	return strings.Join(parts, " and ")
}

// withTenants is a point with k tenants loaded: only those deployed, or
// every namespace deployed and the first k loaded, as the scaling says.
func (s *Study) withTenants(pt point, k int) point {
	np := point{params: maps.Clone(pt.params), names: append(slices.Clone(pt.names), results.TenantsParam), setting: pt.setting.clone()}
	np.params[results.TenantsParam] = strconv.Itoa(k)
	np.setting.Tenants = k
	if s.Scaling.Deploy != DeployAll {
		np.setting.Namespaces = k
	}
	return np
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
