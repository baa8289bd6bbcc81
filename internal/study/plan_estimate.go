package study

import (
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// Set-up times the estimate assumes, per platform. They are rough: the
// runner's progress replaces them with the times it observes. On the lab
// every proxy is an Envoy starting on the host's few cores, so a mesh's
// installation grows with its proxy count beyond the few that start side
// by side (250 sidecars took about 5 minutes on 2 cores; a mesh of up to
// four proxies installs and verifies in about 1.5 s); a cluster starts
// proxies on many nodes at once. fresh is taking the platform down and up
// between deployments (the lab's namespaces and cgroups); calibrate is
// one mesh's calibration (quick's three took 27 s on 2026-12-07).
var setupTimes = map[string]struct {
	deploy, install, perProxy, calibrate, fresh time.Duration
	parallelProxies                             int
}{
	PlatformLab:        {deploy: 10 * time.Second, install: 1500 * time.Millisecond, perProxy: 1200 * time.Millisecond, parallelProxies: 4, calibrate: 9 * time.Second, fresh: 2 * time.Second},
	PlatformKubernetes: {deploy: 2 * time.Minute, install: 90 * time.Second, fresh: 30 * time.Second},
}

// proxies is the number of Envoy processes a cell's mesh runs: one per
// pod for sidecar profiles, one per node for ambient ones, plus waypoints
// per namespace, plus the ingress gateway every profile has.
func (s *Study) proxies(c Cell) int {
	n := 1
	p := c.Mesh.Profile
	switch {
	case strings.HasPrefix(p, "sidecar"):
		n += s.pods(c)
	case strings.HasPrefix(p, "ambient"), strings.HasPrefix(p, "waypoint"):
		// A node proxy per cluster node; the client node is outside.
		for _, node := range s.Platform.Nodes {
			if node.Role != infra.NodeClient {
				n++
			}
		}
	}
	if strings.Contains(p, "waypoint") {
		n += c.Namespaces * max(1, c.Mesh.WaypointReplicas)
	}
	return n
}

// pods counts a cell's application pods and load generators.
func (s *Study) pods(c Cell) int {
	n := 0
	for _, d := range s.Graph.Deployments() {
		r := d.Replicas
		if v, ok := c.Replicas[d.Service]; ok {
			r = v
		}
		n += r
	}
	return n*c.Namespaces + c.generators()
}

// assumedClosedLoopRate is the throughput the estimate assumes for a
// closed loop bounded by a request count when nothing better is known.
const assumedClosedLoopRate = 1000.0

// estimate sets each cell's and the plan's expected duration: warm-up and
// measured phase, plus a deployment at each new workload shape and a mesh
// installation at each change of mesh; and the plan's: each deployment
// after the first brings the platform up afresh, and where the study
// calibrates, the first calibrates every mesh and the others the
// reference alone.
func (p *Plan) estimate(s *Study) {
	t := setupTimes[p.Platform]
	p.Estimate = 0
	if needsCalibration(p.Scaling) {
		p.Estimate += t.deploy + time.Duration(len(s.calibrationMeshes())+p.Deployments-1)*t.calibrate
	}
	p.Estimate += time.Duration(max(p.Deployments-1, 0)) * t.fresh
	prevGroup, prevDep, prevMesh := 0, 0, ""
	for i := range p.Cells {
		c := &p.Cells[i]
		o := c.Load.Options
		d := o.Warmup + o.Duration
		if o.Requests > 0 {
			d += time.Duration(float64(o.Requests) / p.rate(s, c) * float64(time.Second))
		}
		if c.Group != prevGroup || c.Deployment != prevDep {
			d += t.deploy
			prevMesh = ""
		}
		if c.Mesh.Name != prevMesh {
			d += t.install + time.Duration(max(0, s.proxies(*c)-t.parallelProxies))*t.perProxy
		}
		prevGroup, prevDep, prevMesh = c.Group, c.Deployment, c.Mesh.Name
		c.Estimate = d
		p.Estimate += d
	}
}

// rate is the request rate the estimate assumes for a cell bounded by a
// request count: the open loop's offered rate, else the slowest mesh's
// measured capacity, else (calibration pending) the rate at which the
// largest count takes the scaling's measure time, else a guess.
func (p *Plan) rate(s *Study, c *Cell) float64 {
	o := c.Load.Options
	gens := float64(c.generators())
	switch {
	case o.Rate > 0:
		return o.Rate * gens
	case p.Scaling.Reference != "":
		return p.Scaling.Capacities[p.Scaling.Reference]
	case p.Scaling.Mode == results.ScaleCalibrated && s.Scaling != nil:
		var largest int64
		for _, x := range p.Cells {
			largest = max(largest, x.Load.Options.Requests)
		}
		return float64(largest) / s.Scaling.Measure.D().Seconds()
	}
	return assumedClosedLoopRate
}

// generators is how many load generators a cell runs.
func (c Cell) generators() int {
	switch {
	case !c.Load.PerNamespace:
		return 1
	case c.Load.Tenants > 0:
		return c.Load.Tenants
	}
	return c.Namespaces
}

// NoisyEstimate is how long a study may take on a noisy host, where the
// plan's Estimate assumes a quiet one: the most rounds its repetitions
// allow, every cell and calibration measured again as many times as the
// noise guard re-runs a noisy one, and on the lab the whole time the
// runner may wait for a quiet host. The preset runs docs/studies.md
// reports on a contended host (51 and 60 minutes against a plan of 29)
// lie between the two.
func NoisyEstimate(s *Study, sc results.Scaling) (time.Duration, error) {
	p, err := newPlan(s, sc, max(s.Repetitions.Min, s.Repetitions.Max))
	if err != nil {
		return 0, err
	}
	retries := time.Duration(*s.Noise.Retries)
	d := p.Estimate
	for _, c := range p.Cells {
		d += retries * c.Estimate
	}
	if needsCalibration(p.Scaling) {
		d += retries * time.Duration(len(s.calibrationMeshes())+p.Deployments-1) * setupTimes[p.Platform].calibrate
	}
	if p.Platform == PlatformLab {
		d += defaultQuiet.budget
	}
	return d, nil
}
