package analysis

import (
	"strconv"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// Rep is one usable repetition of a cell: its figures, and its resource
// usage over time and allocation per part.
type Rep struct {
	Summary  results.Summary
	MeshSpec mesh.MeshSpec
	Load     results.Load
	Start    time.Time // of the measured phase
	Values   map[Metric]float64
	Usage    map[Part][]UsagePoint
	Alloc    map[Part]Allocation
	// Components are the measured containers with their requests and
	// limits, for cost models that pack pods.
	Components []metrics.Component
	// Gaps counts the spans of the window some component had no reading
	// for: left out of its means, not read as zero.
	Gaps int
	// Replicas are the requests each app replica answered, when counted.
	Replicas []infra.ReplicaRequests
}

// UsagePoint is a part's summed CPU (cores) and working set (bytes) at T
// seconds into the measured phase.
type UsagePoint struct {
	T   float64 `json:"t"`
	CPU float64 `json:"cpu"`
	Mem float64 `json:"mem"`
}

// Allocation is what a part's components asked for: summed requests and
// limits in cores and bytes, and how many components set each.
type Allocation struct {
	Components  int     `json:"components"`
	CPURequest  float64 `json:"cpu_request"`
	CPULimit    float64 `json:"cpu_limit"`
	MemRequest  float64 `json:"mem_request"`
	MemLimit    float64 `json:"mem_limit"`
	WithRequest int     `json:"with_request"` // components with a CPU or memory request
}

// newRep computes a usable cell's figures. appNodes names the nodes whose
// role is app, for PartDataPlaneAppNodes; nil leaves that part out.
func newRep(c *cellFile, appNodes map[string]bool) *Rep {
	m := c.Merged
	h := m.Latency
	secs := m.End.Sub(m.Start).Seconds()
	r := &Rep{
		Summary: c.Summary, MeshSpec: c.MeshSpec, Load: c.Load, Start: m.Start, Replicas: c.Replicas,
		Values: map[Metric]float64{
			MeanLatency: ms(h.Mean()),
			MinLatency:  ms(h.Min()),
			MaxLatency:  ms(h.Max()),
			Duration:    secs,
			QPS:         float64(m.Requests) / secs,
			ConnRate:    float64(m.NewConnections) / secs,
		},
	}
	for _, p := range Percentiles {
		r.Values[p.Metric] = ms(h.Percentile(p.Percentile))
	}
	var offered float64
	for _, g := range c.Generators {
		offered += g.Options.Rate
	}
	if offered > 0 {
		r.Values[Offered] = offered
	}
	if m.Requests > 0 {
		r.Values[ErrorPct] = 100 * float64(load.Failed(m.Errors, m.StatusCodes)) / float64(m.Requests)
	}
	// An exchange carries its answer's payload one way and its upload the
	// other.
	payload, _ := strconv.ParseInt(c.Summary.Params[results.ParamPayload], 10, 64)
	upload, _ := strconv.ParseInt(c.Summary.Params[results.ParamUpload], 10, 64)
	if bytes := max(payload, 0) + max(upload, 0); bytes > 0 && secs > 0 {
		var ok int64
		for code, n := range m.StatusCodes {
			if code >= 200 && code < 300 {
				ok += n
			}
		}
		r.Values[Gbps] = float64(ok*bytes) * 8 / secs / 1e9
	}
	if l := c.NamespaceLatencyMs; l != nil {
		r.Values[NamespaceP50], r.Values[NamespaceP95], r.Values[NamespaceP99] = l.P50, l.P95, l.P99
	}
	for _, s := range c.Resources {
		r.Components = append(r.Components, s.Component)
		r.Gaps += len(s.Gaps)
	}
	byPart := partsOf(c.Resources, appNodes)
	r.Usage = make(map[Part][]UsagePoint, len(byPart))
	r.Alloc = make(map[Part]Allocation, len(byPart))
	for p, ss := range byPart {
		var cpu, mem float64
		var a Allocation
		for _, s := range ss {
			cpu += s.MeanCPU()
			mem += s.MeanMemory()
			a.add(s.Component)
		}
		r.Values[CPU(p)] = cpu
		r.Values[Memory(p)] = mem
		r.Alloc[p] = a
		r.Usage[p] = sumOverTime(ss, m.Start)
		if len(r.Usage[p]) > 0 {
			peak := 0.0
			for _, u := range r.Usage[p] {
				peak = max(peak, u.Mem)
			}
			r.Values[PeakMemory(p)] = peak
		}
	}
	if cpu, ok := r.Values[CPU(PartDataPlane)]; ok && r.Values[QPS] > 0 {
		r.Values[CPUPerRequest] = cpu / r.Values[QPS] * 1e6
		if app := r.Values[CPU(RolePart(metrics.RoleApp))]; app > 0 {
			r.Values[CPUPerAppCPU] = cpu / app
		}
	}
	return r
}

func (a *Allocation) add(c metrics.Component) {
	a.Components++
	a.CPURequest += float64(c.CPURequestMilli) / 1000
	a.CPULimit += float64(c.CPULimitMilli) / 1000
	a.MemRequest += float64(c.MemRequestBytes)
	a.MemLimit += float64(c.MemLimitBytes)
	if c.CPURequestMilli > 0 || c.MemRequestBytes > 0 {
		a.WithRequest++
	}
}

// partsOf sorts series into parts: each role, the whole data plane, and
// the data plane on app nodes.
func partsOf(series []metrics.Series, appNodes map[string]bool) map[Part][]metrics.Series {
	out := map[Part][]metrics.Series{}
	for _, s := range series {
		role := s.Component.Role
		out[RolePart(role)] = append(out[RolePart(role)], s)
		if role.DataPlane() {
			out[PartDataPlane] = append(out[PartDataPlane], s)
			if appNodes != nil && appNodes[s.Component.Node] {
				out[PartDataPlaneAppNodes] = append(out[PartDataPlaneAppNodes], s)
			}
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
