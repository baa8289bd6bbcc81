package results

import (
	"net/http"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/topology"
)

// The load a cell ran and what its generators measured, as the results
// format writes them. They mirror the engine's load.Options and
// load.Result field by field, but are this package's own, so that a field
// added to the engine reaches the files only through the conversions
// below, and with a schema version bump (TestSchemaShape).

// Latency is a set of latency percentiles in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// LatencyOf summarizes a histogram as the load engine does.
func LatencyOf(h *metrics.Histogram) Latency { return Latency(load.LatencyOf(h)) }

// LoadOptions are the load generator's options.
type LoadOptions struct {
	URL    string      `json:"url"`
	Method string      `json:"method"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	// BodySize is the filler each request sent as its body, in bytes (an
	// upload).
	BodySize int64         `json:"body_size,omitempty"`
	Timeout  time.Duration `json:"timeout"`
	Rate     float64       `json:"rate,omitempty"`
	// Arrivals is an open loop's arrival process, uniform or poisson
	// (schema 19); "" is uniform, as every open loop before it ran: read
	// it with ArrivalsOf.
	Arrivals string `json:"arrivals,omitempty"`
	// Seed seeded Poisson arrivals (schema 19).
	Seed        uint64        `json:"seed,omitempty"`
	Connections int           `json:"connections"`
	Duration    time.Duration `json:"duration,omitempty"`
	Requests    int64         `json:"requests,omitempty"`
	Warmup      time.Duration `json:"warmup,omitempty"`
	// WarmupMax let a closed loop's warm-up go on while its throughput
	// rose, up to this (calibration; schema 18).
	WarmupMax   time.Duration `json:"warmup_max,omitempty"`
	NoKeepAlive bool          `json:"no_keepalive,omitempty"`
	// ConnRequests is how many requests a connection carried before it
	// was closed; 0: as many as the server allowed.
	ConnRequests int  `json:"conn_requests,omitempty"`
	HTTP2        bool `json:"http2,omitempty"`
	GRPC         bool `json:"grpc,omitempty"`
	Insecure     bool `json:"insecure,omitempty"`
}

// ArrivalsOf is the arrival process the options ran: load.ArrivalsUniform
// or load.ArrivalsPoisson in an open loop, uniform where results before
// schema 19 say nothing; "" in a closed loop, which has none.
func (o LoadOptions) ArrivalsOf() string { return load.ArrivalsOf(o.Rate, o.Arrivals) }

// LoadOptionsOf records the engine's options.
func LoadOptionsOf(o load.Options) LoadOptions { return LoadOptions(o) }

// Load is the load of one cell: the options of each generator, where the
// load entered and whether each namespace had its own generator.
type Load struct {
	Options      LoadOptions `json:"options"`
	Path         string      `json:"path"`
	PerNamespace bool        `json:"per_namespace"`
	// Resources are each generator pod's requests and limits, where the
	// platform applies them (Kubernetes).
	Resources topology.Resources `json:"resources,omitzero"`
	// Tenants is how many namespaces were loaded when fewer than all of
	// them were (ns-1 ... ns-Tenants); 0 is all.
	Tenants int `json:"tenants,omitempty"`
}

// LoadOf records a platform's load spec.
func LoadOf(l infra.LoadSpec) Load {
	return Load{Options: LoadOptionsOf(l.Options), Path: string(l.Path), PerNamespace: l.PerNamespace,
		Resources: l.Resources, Tenants: l.Tenants}
}

// Generator is one load generator's result (or their exact merge).
type Generator struct {
	Options     LoadOptions                   `json:"options"`
	Start       time.Time                     `json:"start"`
	End         time.Time                     `json:"end"`
	Requests    int64                         `json:"requests"`
	Errors      int64                         `json:"errors"`
	StatusCodes map[int]int64                 `json:"status_codes"`
	ErrorKinds  map[string]int64              `json:"error_kinds,omitempty"`
	Latency     *metrics.Histogram            `json:"latency"`
	ByClass     map[string]*metrics.Histogram `json:"by_class"`
	SendLag     *metrics.Histogram            `json:"send_lag"`
	LateSends   int64                         `json:"late_sends"`
	// NewConnections are the connections the measured phase opened.
	NewConnections int64              `json:"new_connections,omitempty"`
	Uncorrected    *metrics.Histogram `json:"uncorrected,omitempty"`
	// WarmedUp is how long a warm-up with WarmupMax took to settle
	// (schema 18).
	WarmedUp     time.Duration `json:"warmed_up,omitempty"`
	AchievedRate float64       `json:"achieved_rate"`
	ClientCores  int           `json:"client_cores"`
	ClientCPU    time.Duration `json:"client_cpu"`
	Distorted    bool          `json:"distorted"`
	Warnings     []string      `json:"warnings,omitempty"`
}

// GeneratorOf records a load engine result.
func GeneratorOf(r load.Result) Generator {
	return Generator{
		Options: LoadOptionsOf(r.Options), Start: r.Start, End: r.End,
		Requests: r.Requests, Errors: r.Errors, StatusCodes: r.StatusCodes, ErrorKinds: r.ErrorKinds,
		Latency: r.Latency, ByClass: r.ByClass, SendLag: r.SendLag, LateSends: r.LateSends, NewConnections: r.NewConnections, Uncorrected: r.Uncorrected,
		WarmedUp: r.WarmedUp, AchievedRate: r.AchievedRate, ClientCores: r.ClientCores, ClientCPU: r.ClientCPU,
		Distorted: r.Distorted, Warnings: r.Warnings,
	}
}
