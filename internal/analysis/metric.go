package analysis

import (
	"strings"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Metric names one figure measured once per repetition.
type Metric string

// The latency, throughput and error metrics. Latencies are milliseconds,
// read off the cell's merged histogram.
const (
	P50         Metric = "p50"
	P90         Metric = "p90"
	P95         Metric = "p95"
	P99         Metric = "p99"
	P999        Metric = "p99.9"
	MeanLatency Metric = "mean"
	MinLatency  Metric = "min"
	MaxLatency  Metric = "max"
	QPS         Metric = "qps" // completed requests per second of the measured phase
	// Offered is the open loop's rate as sent: each generator's rate (as
	// scaled for the run), summed over the cell's generators; absent in a
	// closed loop. QPS is what was achieved.
	Offered  Metric = "offered_rps"
	Duration Metric = "time_s" // length of the measured phase in seconds
	ErrorPct Metric = "errors_pct"
	// ConnRate is the new connections the generators opened a second of
	// the measured phase.
	ConnRate Metric = "conn_rate"
	// Gbps is the bytes transferred a second, in Gbit/s: successful (2xx)
	// exchanges times the payload their answers were padded to (the test
	// service pads each answer to it) plus the upload their requests
	// carried, for cells whose params set either.
	Gbps Metric = "gbps"
	// CPUPerRequest is the data plane's CPU per completed request, in
	// microseconds: its mean cores over the measured phase divided by QPS.
	CPUPerRequest Metric = "dp_cpu_us_per_req"
	// CPUPerAppCPU is the data plane's mean cores over the app's, in the
	// same cell: the app does the same work for every request, so its CPU
	// is a clock of the host's speed measured with the proxies, and the
	// ratio divides out what makes the same work cost more CPU time from
	// one minute to the next (on a shared VM, up to 2x), which CPU per
	// request keeps. It compares meshes of one profile (releases, a
	// filter) whose app runs alike; absent where the app used no CPU.
	CPUPerAppCPU Metric = "dp_cpu_per_app_cpu"
	// With a generator per namespace: the mean over namespaces of each
	// one's own percentile, as the 50-tenant study averaged them, beside
	// the pooled percentiles above.
	NamespaceP50 Metric = "ns-mean p50"
	NamespaceP95 Metric = "ns-mean p95"
	NamespaceP99 Metric = "ns-mean p99"
)

// Percentiles are the latency percentiles every table shows, with the
// percentile each stands for.
var Percentiles = []struct {
	Metric     Metric
	Percentile float64
}{{P50, 50}, {P90, 90}, {P95, 95}, {P99, 99}, {P999, 99.9}}

// MinRequests is the smallest sample a percentile metric may be read
// from (metrics.MinSamples): p99 needs 1,000 requests and p99.9 10,000.
// Other metrics need none (0).
func (m Metric) MinRequests() int64 {
	for _, p := range Percentiles {
		if p.Metric == m {
			return metrics.MinSamples(p.Percentile)
		}
	}
	return 0
}

// Part is a group of measured components whose CPU and memory are summed:
// one role, the whole data plane, or the data plane on the app nodes.
type Part string

// Parts beyond the roles themselves.
const (
	PartDataPlane         Part = "data-plane"
	PartDataPlaneAppNodes Part = "data-plane-app-nodes"
)

// RolePart is the part holding every component of one role.
func RolePart(r metrics.Role) Part { return Part(r) }

// Label is the part's name in tables.
func (p Part) Label() string {
	switch p {
	case PartDataPlane:
		return "data plane"
	case PartDataPlaneAppNodes:
		return "data plane on app nodes"
	case Part(metrics.RoleLoad):
		return "load generator"
	case Part(metrics.RoleNodeProxy):
		return "node proxy (ztunnel)"
	case Part(metrics.RoleControlPlane):
		return "control plane"
	}
	return string(p)
}

// CPU is the mean CPU of a part over the measured window, in cores,
// summed over its components.
func CPU(p Part) Metric { return Metric("cpu:" + string(p)) }

// Memory is the mean working set of a part over the measured window, in
// bytes, summed over its components.
func Memory(p Part) Metric { return Metric("mem:" + string(p)) }

// PeakMemory is the highest working set of a part over the measured
// window, in bytes, summed over its components sample by sample.
func PeakMemory(p Part) Metric { return Metric(peakPrefix + string(p)) }

const peakPrefix = "mem-peak:"

// HigherIsBetter reports whether a larger value of m is an improvement.
func (m Metric) HigherIsBetter() bool { return m == QPS || m == Gbps }

// IsLatency reports whether m is a latency in milliseconds.
func (m Metric) IsLatency() bool {
	switch m {
	case P50, P90, P95, P99, P999, MeanLatency, MinLatency, MaxLatency, NamespaceP50, NamespaceP95, NamespaceP99:
		return true
	}
	return false
}

// IsMemory reports whether m is a memory figure in bytes.
func (m Metric) IsMemory() bool {
	return strings.HasPrefix(string(m), "mem:") || strings.HasPrefix(string(m), peakPrefix)
}

// IsCPU reports whether m is a CPU figure in cores.
func (m Metric) IsCPU() bool { return strings.HasPrefix(string(m), "cpu:") }

// Label is the metric's name in tables.
func (m Metric) Label() string {
	switch {
	case m.IsCPU():
		return Part(strings.TrimPrefix(string(m), "cpu:")).Label() + " CPU"
	case strings.HasPrefix(string(m), peakPrefix):
		return Part(strings.TrimPrefix(string(m), peakPrefix)).Label() + " peak memory"
	case m.IsMemory():
		return Part(strings.TrimPrefix(string(m), "mem:")).Label() + " memory"
	}
	switch m {
	case QPS:
		return "QPS"
	case Offered:
		return "offered req/s"
	case Duration:
		return "time"
	case ErrorPct:
		return "errors"
	case ConnRate:
		return "new connections/s"
	case Gbps:
		return "Gbit/s"
	case CPUPerRequest:
		return "data plane CPU per request (µs)"
	case CPUPerAppCPU:
		return "data plane CPU per app CPU (cores a core)"
	}
	return string(m)
}
