package results

import (
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
)

// DefaultNoiseThreshold is the host noise, in cores, above which a cell is
// noisy: 5% of one CPU taken by something outside the study is already
// the size of the differences a mesh comparison looks for at low load.
const DefaultNoiseThreshold = 0.05

// SlowdownLimit is how much slower than their fastest in the run the
// study's CPUs may run a fixed piece of work around a measurement before
// it counts as noisy. On a quiet host here 80 probes came within 10% of
// the fastest but for a few, the slowest 21% slower; the slowdown that
// moved a capacity search here cost every component 50-70% more CPU per
// request.
const SlowdownLimit = 0.25

// Noisy reports whether a measurement's host noise was above threshold
// cores, or its CPUs ran slower than SlowdownLimit allows; false where
// neither was measured.
func Noisy(h *infra.HostCPU, threshold float64) bool {
	return h != nil && (h.Noise > threshold || h.Slowdown > SlowdownLimit)
}

// NoiseReason says what a noisy cell's host did: the cores something
// outside the study used, and how much slower its CPUs ran.
func (s Summary) NoiseReason() string {
	var parts []string
	if s.HostNoise != nil {
		parts = append(parts, fmt.Sprintf("%.2f cores of host noise", *s.HostNoise))
	}
	if s.HostSlowdown > SlowdownLimit {
		parts = append(parts, fmt.Sprintf("the CPUs %.0f%% slower than at their fastest in the run", 100*s.HostSlowdown))
	}
	if len(parts) == 0 {
		return "host noise not measured"
	}
	return strings.Join(parts, ", ")
}

// LoadNodeBusyLimit is the share of the load node's CPUs that, once busy,
// leaves the generators no headroom to send on time or to read replies as
// they come: everything on those CPUs counts, generators and not.
const LoadNodeBusyLimit = 0.9

// LoadNodeSaturated says whether a node running load generators (a load
// node, or the client node of the ingress path) had its CPUs too busy for
// its generators to be trusted, summing every generator and everything
// else that ran there; the reason says by how much. Per-process checks
// miss many generators sharing one CPU: each one is below its own limit
// while together they fill it. A meshed load pod's own proxy counts too:
// a CPU it fills delays the generator's sends and reads as much as one
// the generators fill, and the window (warm-up and connection opening
// included) is wider than the containers' sampled one, so its share
// cannot be taken out.
func LoadNodeSaturated(h *infra.HostCPU) (string, bool) {
	if h == nil {
		return "", false
	}
	var worst infra.NodeCPU
	share := -1.0
	for _, n := range h.Nodes {
		if (n.Role != infra.NodeLoad && n.Role != infra.NodeClient) || n.CPUs == 0 {
			continue
		}
		if s := n.Busy / float64(n.CPUs); s > share {
			worst, share = n, s
		}
	}
	if share < LoadNodeBusyLimit {
		return "", false
	}
	return fmt.Sprintf("the load node %s's %d CPU(s) were %.0f%% busy (%.2f cores: its generators and everything else on them, %.2f of it outside the study), over the %.0f%% at which generators cannot keep their schedule",
		worst.Name, worst.CPUs, 100*share, worst.Busy, worst.Outside, 100*LoadNodeBusyLimit), true
}

// ClosedLoopMinBusy is the share of a closed loop's connections that must
// be waiting on the service on average; below it the generator, not the
// service, set the pace.
const ClosedLoopMinBusy = 0.8

// ClosedLoopShortfall says whether a closed-loop generator kept fewer of
// its connections busy than it was given. By Little's law the mean number
// of requests in flight is throughput times mean latency; a closed loop
// that never idles keeps it at its connection count, so a shortfall is
// time the generator spent between a reply and the next request. Open
// loops have their own rate check in the load engine.
func ClosedLoopShortfall(r load.Result) (string, bool) {
	o := r.Options
	if o.Rate > 0 || o.Connections <= 0 || r.Latency == nil || r.Latency.Count() == 0 || !r.End.After(r.Start) {
		return "", false
	}
	// Throughput here is completions over the measured phase, as
	// AchievedRate is for a closed loop.
	inFlight := r.AchievedRate * r.Latency.Mean().Seconds()
	if inFlight >= ClosedLoopMinBusy*float64(o.Connections) {
		return "", false
	}
	return fmt.Sprintf("closed loop kept %.1f of its %d connections busy on average (throughput x mean latency), under %.0f%%: the generator, not the service, set the pace",
		inFlight, o.Connections, 100*ClosedLoopMinBusy), true
}
