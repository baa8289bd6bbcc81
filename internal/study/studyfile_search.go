package study

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/meshbench/meshbench/internal/results"

	"github.com/meshbench/meshbench/internal/search"
	"github.com/meshbench/meshbench/internal/topology"
)

// Search makes a study a capacity search: for each mesh, on the same
// workload, the highest open-loop rate at which the SLO holds (see package
// search). The study's load gives everything but the rate and the trials'
// lengths; its meshes' trials interleave.
type Search struct {
	SLO SLOSpec `json:"slo"`
	// Over is what the search varies: "rate" (default), the open-loop
	// rate, or "connections", the connections held open, each sending
	// PerConnectionRate requests a second: the concurrent-connection
	// ceiling, the most connections held before the SLO breaks.
	Over string `json:"over,omitempty"`
	// PerConnectionRate is each held connection's requests a second, when
	// the search is over connections: slow requests, most connections idle
	// at any moment.
	PerConnectionRate float64 `json:"per_connection_rate,omitempty"`
	// StartConnections and MaxConnections are the first count tried and
	// the cap, when the search is over connections.
	StartConnections int `json:"start_connections,omitempty"`
	MaxConnections   int `json:"max_connections,omitempty"`
	// StartRate is the first total rate tried, in requests per second.
	StartRate float64 `json:"start_rate,omitempty"`
	// MaxRate caps the rates tried; 0 is no cap.
	MaxRate float64 `json:"max_rate,omitempty"`
	// Growth multiplies the rate while the SLO holds; default 2.
	Growth float64 `json:"growth,omitempty"`
	// Precision is the bracket's relative width at which bisection stops;
	// default 0.05.
	Precision float64 `json:"precision,omitempty"`
	// Trial is the measured length of the search's short trials, Confirm
	// that of the confirmation trials; defaults 5s and 20s. Each trial
	// runs the study's load.warmup first.
	Trial   topology.Duration `json:"trial,omitempty"`
	Confirm topology.Duration `json:"confirm,omitempty"`
	// Confirmations is how many full-length trials of evidence decide a
	// rate: a rate is met once its passing confirmation time reaches (1 -
	// exceed_ratio) of confirmations × confirm, broken once its failing
	// time exceeds exceed_ratio of it; default 3.
	Confirmations int `json:"confirmations,omitempty"`
	// ExceedRatio is the share of that time that may break the SLO with
	// the rate still met; default 0.5 (most of the time must meet it).
	ExceedRatio *float64 `json:"exceed_ratio,omitempty"`
	// Budget bounds each mesh's measured trial time; a search that would
	// overrun it stops with what it has, and says so. Default: none.
	Budget topology.Duration `json:"budget,omitempty"`
	// Retries bounds the re-runs of a trial that is no evidence (the
	// generator saturated, the host was noisy); default 2.
	Retries int `json:"retries,omitempty"`
	// MaxTrials bounds each mesh's search; default 40.
	MaxTrials int `json:"max_trials,omitempty"`
}

// SLOSpec is the objective: p99 (p50 and p95 optional) and the share of
// requests that may fail (no response, or a 5xx).
type SLOSpec struct {
	P50    topology.Duration `json:"p50,omitempty"`
	P95    topology.Duration `json:"p95,omitempty"`
	P99    topology.Duration `json:"p99"`
	Errors *float64          `json:"errors,omitempty"`
}

// searchOverRate is the default search, over the open-loop rate.
const searchOverRate = "rate"

// DefaultMaxErrorRate is the SLO's error limit when a search gives none,
// and a cell's when the study gives none.
const DefaultMaxErrorRate = 0.001

// Config is the search's settings for the search package.
func (s *Search) Config() search.Config {
	errs := DefaultMaxErrorRate
	if s.SLO.Errors != nil {
		errs = *s.SLO.Errors
	}
	var exceed float64
	if s.ExceedRatio != nil {
		exceed = *s.ExceedRatio
	}
	c := search.Config{
		SLO:   search.SLO{P50: s.SLO.P50.D(), P95: s.SLO.P95.D(), P99: s.SLO.P99.D(), MaxErrorRate: errs},
		Start: s.StartRate, MaxRate: s.MaxRate, Growth: s.Growth, Precision: s.Precision,
		Short: s.Trial.D(), Full: s.Confirm.D(), Confirmations: s.Confirmations, ExceedRatio: exceed,
		Budget: s.Budget.D(), Retries: s.Retries, MaxTrials: s.MaxTrials,
	}
	if s.overConnections() {
		// The search's rates are connection counts. The fewest worth a
		// trial send a short trial search.MinSamples requests.
		c.Start, c.MaxRate = float64(s.StartConnections), float64(s.MaxConnections)
		c.Unit = "connections"
		if s.PerConnectionRate > 0 {
			short := cmp.Or(c.Short, search.DefaultShort)
			c.MinRate = min(c.Start, math.Ceil(search.MinSamples/(s.PerConnectionRate*short.Seconds())))
		}
	}
	return c.WithDefaults()
}

// overConnections says whether the search varies the connections held
// open rather than the rate.
func (s *Search) overConnections() bool { return s.Over == results.OverConnections }

// validate checks the search section and what it asks of the rest of the
// study.
func (s *Study) validateSearch() error {
	sr := s.Search
	if sr == nil {
		return nil
	}
	switch {
	case sr.SLO.P99 <= 0 && sr.SLO.P95 <= 0 && sr.SLO.P50 <= 0:
		return fieldError("search.slo.p99", "required: the latency limit the capacity is found at, such as 10ms")
	case sr.SLO.P50 < 0 || sr.SLO.P95 < 0 || sr.SLO.P99 < 0:
		return fieldError("search.slo", "latency limits must be positive")
	case sr.SLO.Errors != nil && (*sr.SLO.Errors < 0 || *sr.SLO.Errors >= 1):
		return fieldError("search.slo.errors", "want a share of requests in [0, 1) such as 0.001, got %g", *sr.SLO.Errors)
	case sr.Over != "" && sr.Over != searchOverRate && sr.Over != results.OverConnections:
		return fieldError("search.over", "%q: want %s or %s", sr.Over, searchOverRate, results.OverConnections)
	case sr.overConnections() && sr.StartConnections <= 0:
		return fieldError("search.start_connections", "required over connections: the first count of connections held open")
	case sr.overConnections() && !(sr.PerConnectionRate > 0):
		return fieldError("search.per_connection_rate", "required over connections: each connection's requests a second, such as 0.1")
	case sr.overConnections() && (sr.StartRate != 0 || sr.MaxRate != 0):
		return fieldError("search.start_rate", "a search over connections sets the rate from per_connection_rate; give start_connections and max_connections")
	case sr.overConnections() && s.Load.KeepAlive != nil && !*s.Load.KeepAlive, sr.overConnections() && s.Load.ConnRequests > 0:
		return fieldError("load.keepalive", "a search over connections holds its connections open: leave keepalive and conn_requests at their defaults")
	case !sr.overConnections() && (sr.StartConnections != 0 || sr.MaxConnections != 0 || sr.PerConnectionRate != 0):
		return fieldError("search.start_connections", "applies to a search over connections (over: connections)")
	case !sr.overConnections() && sr.StartRate <= 0:
		return fieldError("search.start_rate", "required: a positive rate in requests per second")
	case sr.Growth != 0 && sr.Growth <= 1:
		return fieldError("search.growth", "must be above 1, got %g", sr.Growth)
	case sr.Precision < 0 || sr.Precision >= 1:
		return fieldError("search.precision", "want a share of the rate in (0, 1) such as 0.05, got %g", sr.Precision)
	case sr.Trial < 0 || sr.Confirm < 0:
		return fieldError("search.trial", "durations must not be negative")
	case sr.Confirmations < 0 || sr.Retries < 0 || sr.MaxTrials < 0:
		return fieldError("search.confirmations", "counts must not be negative")
	case sr.ExceedRatio != nil && (*sr.ExceedRatio <= 0 || *sr.ExceedRatio >= 1):
		return fieldError("search.exceed_ratio", "want a share of the confirmation time in (0, 1) such as 0.5, got %g", *sr.ExceedRatio)
	case sr.Budget < 0:
		return fieldError("search.budget", "must not be negative")
	case s.Load.Requests != 0:
		return fieldError("load.requests", "the search sets each trial's length; leave requests out")
	case len(s.Sweeps) > 0 && s.Load.Rate == 0:
		return fieldError("sweeps", "a search study without load.rate runs no cells to sweep; give load.rate for the swept cells to run before the search, or remove sweeps")
	case s.Scaling != nil && s.Load.Rate == 0:
		return fieldError("scaling", "a search finds the rate itself; remove scaling, or give load.rate for cells to run before the search")
	}
	if err := sr.Config().Validate(); err != nil {
		return fieldError("search", "%v", err)
	}
	// The search runs on the study's own workload and load, after the
	// cells: a sweep may vary the cells' load, not what is deployed.
	axes, err := s.axes()
	if err != nil {
		return nil // validate reports the sweeps' own errors
	}
	for i, a := range axes {
		for j, p := range a.params {
			if p.workload {
				return fieldError(fmt.Sprintf("sweeps[%d]", i), "%q changes the workload, but the search runs on the study's own workload after the cells: sweep only the load (such as conn_requests or connections) in a study with a search", a.names[j])
			}
		}
	}
	return nil
}

// HasCells reports whether the study runs cells: every study but a pure
// capacity search. A study with both load.rate and search runs its cells
// at that rate first (with its sweeps' values), then the search on the
// same workload with the study's own load, so that one report has the
// latency at a fixed rate and the capacity at the SLO.
func (s *Study) HasCells() bool { return s.Search == nil || s.Load.Rate != 0 }

// searchTrialsAssumed is the number of short trials the estimate assumes a
// search takes to grow and bisect: a few doublings, then a bracket halved
// to 5%.
const searchTrialsAssumed = 10

// searchEstimate is a search study's expected duration: per mesh, the
// assumed short trials and full-length trials deciding both ends of the
// bracket (their measured time at most the budget), each with its warm-up
// and a mesh installation (the meshes interleave), and one deployment.
func (s *Study) searchEstimate(cfg search.Config) time.Duration {
	st := setupTimes[s.Platform.Type]
	per := st.install + s.Load.Warmup.D()
	short, full := searchTrialsAssumed, 2*cfg.Confirmations
	measured := time.Duration(short)*cfg.Short + time.Duration(full)*cfg.Full
	trials := short + full
	if cfg.Budget > 0 && measured > cfg.Budget {
		trials = int(float64(trials) * float64(cfg.Budget) / float64(measured))
		measured = cfg.Budget
	}
	return st.deploy + time.Duration(len(s.Meshes))*(measured+time.Duration(trials)*per)
}
