package predict

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/meshbench/meshbench/internal/results"
)

// FormatVersion is the version of the profile file written here.
// Version 2 fits CPU between each pair of measured rates and keeps each
// hop's latency by rate. Version 3 reads each hop's quantiles where they
// are: version 2 files hold the lowest percent of every hop's latency
// (quantiles read as percentiles), so they are refused. Version 4 keeps a
// sidecar's idle by side (what its pod does).
const FormatVersion = 4

// UnitCosts is what a profile file (meshbench profile) holds: each
// mesh's unit costs as the profiling run measured them, with where and
// how it was measured.
type UnitCosts struct {
	Version int `json:"version"`
	// Study and Source say which run it was extracted from: the study's
	// name and the results directory.
	Study      string             `json:"study"`
	Source     string             `json:"source"`
	Start      time.Time          `json:"start"`
	Provenance results.Provenance `json:"provenance"`
	// Protocols and Payloads are what the run measured: a graph whose
	// calls use another protocol, or answer with a size outside the
	// payloads' range, is not covered.
	Protocols []string `json:"protocols"`
	Payloads  []int    `json:"payloads"`
	// Uncovered says which mesh lacked a protocol the run measured, which
	// leaves the protocol out of Protocols.
	Uncovered []string `json:"uncovered,omitempty"`
	// Reference is the protocol measured at every payload; the others'
	// dependence on payload is taken from it.
	Reference string `json:"reference_protocol"`
	// Nodes is how many app nodes the profiling lab had, each with its
	// node proxy under ambient.
	Nodes int `json:"nodes"`
	// Noisy lists the cells measured while the host was busier than the
	// run's noise threshold allowed; their figures are in the profile.
	Noisy  []string `json:"noisy_cells,omitempty"`
	Meshes []Mesh   `json:"meshes"`
}

// Mesh is one mesh's unit costs.
type Mesh struct {
	Name    string `json:"name"`
	Profile string `json:"profile"`
	Roles   []Role `json:"roles"`
	// Hops is the latency one hop adds over the baseline, by protocol,
	// payload and rate; empty for the baseline.
	Hops []Hop `json:"hops,omitempty"`
	// Parallel is what a second call made at once adds beyond the slower
	// of two independent hops: the two cross the same proxies and wait
	// for each other there. It is the fan-out cell's added latency (front
	// calling back twice in parallel) less what the hops alone predict
	// for it, quantile by quantile; nil when the profile has no fan-out
	// cell.
	Parallel *Hop `json:"parallel,omitempty"`
}

// Scopes: how many instances of a role a cluster runs.
const (
	ScopePod       = "pod"       // one per meshed pod (sidecars)
	ScopeNode      = "node"      // one per node (ztunnel)
	ScopeNamespace = "namespace" // one per namespace (waypoints)
	ScopeCluster   = "cluster"   // one in all (control plane)
)

// Role is one proxy role's costs in a mesh.
type Role struct {
	Role  string `json:"role"`
	Scope string `json:"scope"`
	// Instances is how many the profiling run's cells of one namespace
	// ran, and ClientPods how many of the sidecars sat in load generator
	// pods (which a prediction counts per namespace).
	Instances  int `json:"instances"`
	ClientPods int `json:"client_pods,omitempty"`
	// Fits are the role's CPU against the rate, one line between each
	// pair of neighbouring rates the reference variant was measured at:
	// a proxy's CPU is not one line from idle (it costs more per request
	// at low rates, where each request wakes it), so a prediction reads
	// the line around its own rate.
	Fits []Fit `json:"fits"`
	// MemBytes is one instance's working set with one namespace deployed;
	// MemPerService its growth per service it knows of (every service in
	// every namespace); MemPerConnection the role's total growth per load
	// generator connection.
	MemBytes         Interval `json:"mem_bytes"`
	MemPerService    Interval `json:"mem_per_service_bytes"`
	MemPerConnection Interval `json:"mem_per_connection_bytes"`
}

// Fit is a role's CPU between two rates (of the chain's entry, in
// requests per second): IdleCores + each hop's rate x its cost.
type Fit struct {
	From float64 `json:"from_rps"`
	To   float64 `json:"to_rps"`
	// IdleCores is one instance's CPU where the line meets rate 0: an
	// intercept, not a measured idle. A sidecar's depends on what its pod
	// does, as a hop's Cost does: Server for one that only receives, plus
	// Caller for one that also calls, Entry for a load generator's.
	IdleCores Sides `json:"idle_cores"`
	// Costs are the CPU per request per second of one hop, by protocol
	// and payload.
	Costs []Cost `json:"costs"`
}

// Cost is the cores one request per second costs a role on one hop, by
// side.
type Cost struct {
	Protocol string `json:"protocol"`
	Payload  int    `json:"payload"`
	Sides
}

// Sides is a CPU figure by side of a hop: Server on its receiving end,
// Caller on its sending end when an application pod sends, Entry when the
// load generator does. A role that the run cannot tell apart by side (one
// proxy per node or per namespace) has it all in Server.
type Sides struct {
	Server Interval `json:"server"`
	Caller Interval `json:"caller"`
	Entry  Interval `json:"entry"`
}

// Hop is the latency one hop adds, in milliseconds: its quantiles as a
// Dist, with the quantiles' 95% bounds.
type Hop struct {
	Protocol string  `json:"protocol"`
	Payload  int     `json:"payload"`
	Rate     float64 `json:"rate_rps"`
	// Requests is the smaller of the two histograms' counts.
	Requests int64 `json:"requests"`
	Added    Dist  `json:"added_ms"`
	Low      Dist  `json:"low_ms"`
	High     Dist  `json:"high_ms"`
}

// Interval is a value with its 95% interval.
type Interval struct {
	V  float64 `json:"v"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Add sums two intervals (their bounds add: no cancellation assumed).
func (a Interval) Add(b Interval) Interval { return Interval{a.V + b.V, a.Lo + b.Lo, a.Hi + b.Hi} }

// Times scales an interval by k >= 0.
func (a Interval) Times(k float64) Interval { return Interval{a.V * k, a.Lo * k, a.Hi * k} }

// Minus is a - b: its low bound is a's low less b's high, its high a's
// high less b's low, so that it holds the estimate.
func (a Interval) Minus(b Interval) Interval { return Interval{a.V - b.V, a.Lo - b.Hi, a.Hi - b.Lo} }

// Moved is a + (to - from): a cost or a latency measured under one
// condition, read under another where a reference was measured under
// both.
func (a Interval) Moved(from, to Interval) Interval { return a.Add(to.Minus(from)) }

// exact is a value with no spread.
func exact(v float64) Interval { return Interval{v, v, v} }

// Write writes the profile as indented JSON, atomically.
func (p *UnitCosts) Write(path string) error {
	return results.WriteJSON(filepath.Dir(path), filepath.Base(path), p)
}

// ReadUnitCosts reads a profile file, or extracts one from a profiling
// run's results directory.
func ReadUnitCosts(path string) (*UnitCosts, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return Extract(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	var p UnitCosts
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("--profile %s: not a profile file: %w", path, err)
	}
	if p.Version != FormatVersion {
		return nil, fmt.Errorf("--profile %s: version %d; this meshbench reads version %d (extract it again with 'meshbench profile DIR')", path, p.Version, FormatVersion)
	}
	if len(p.Meshes) == 0 {
		return nil, fmt.Errorf("--profile %s: no meshes", path)
	}
	for _, m := range p.Meshes {
		for _, r := range m.Roles {
			if len(r.Fits) == 0 {
				return nil, fmt.Errorf("--profile %s: mesh %s, role %s: no CPU fits", path, m.Name, r.Role)
			}
		}
	}
	return &p, nil
}

// Mesh returns the named mesh's costs.
func (p *UnitCosts) Mesh(name string) (*Mesh, bool) {
	for i := range p.Meshes {
		if p.Meshes[i].Name == name {
			return &p.Meshes[i], true
		}
	}
	return nil, false
}

// rates is the lowest and highest rate the profile's CPU lines span.
func (p *UnitCosts) rates() (lo, hi float64) {
	lo = math.Inf(1)
	for _, m := range p.Meshes {
		for _, r := range m.Roles {
			lo, hi = min(lo, r.Fits[0].From), max(hi, r.Fits[len(r.Fits)-1].To)
		}
	}
	return lo, hi
}
