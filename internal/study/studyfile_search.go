package study

import (
	"fmt"
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
	// StartFraction, in a study whose cells calibrate (scaling.fraction),
	// starts each mesh's search at this fraction of the closed-loop
	// capacity the first deployment measured for it (not below
	// StartRate), rather than at StartRate: a mesh at a few thousand
	// requests a second then skips the doublings up from StartRate, whose
	// low rates are the longest trials. 0, the default: every search
	// starts at StartRate.
	StartFraction float64 `json:"start_fraction,omitempty"`
	// MaxRate caps the rates tried; 0 is no cap.
	MaxRate float64 `json:"max_rate,omitempty"`
	// Growth multiplies the rate while the SLO holds; default 2.
	Growth float64 `json:"growth,omitempty"`
	// Trial is the shortest measured length of a trial, default 5s; a
	// trial at a rate too low to send the requests the SLO's percentile
	// needs (1,000 for a p99) in that time runs until it has. Each trial
	// runs the study's load.warmup first.
	Trial topology.Duration `json:"trial,omitempty"`
	// Trials is how many trials locate the capacity once the SLO has
	// been seen both met and broken, each where the fit of every trial so
	// far puts it; default 10.
	Trials int `json:"trials,omitempty"`
	// Resamples is how many bootstrap resamples of the whole search give
	// the capacity's interval; default 1000.
	Resamples int `json:"resamples,omitempty"`
	// Budget bounds each mesh's measured trial time; a search that would
	// overrun it stops and gives a bound ("at least"), not an interval.
	// Default: none.
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
	c := search.Config{
		SLO:   search.SLO{P50: s.SLO.P50.D(), P95: s.SLO.P95.D(), P99: s.SLO.P99.D(), MaxErrorRate: errs},
		Start: s.StartRate, MaxRate: s.MaxRate, Growth: s.Growth, Trial: s.Trial.D(), Trials: s.Trials,
		Resamples: s.Resamples, Budget: s.Budget.D(), Retries: s.Retries, MaxTrials: s.MaxTrials,
	}
	if s.overConnections() {
		// The search's rates are connection counts, each sending
		// PerConnectionRate requests a second: a trial's length and the
		// fewest connections worth a trial follow from that.
		c.Start, c.MaxRate = float64(s.StartConnections), float64(s.MaxConnections)
		c.Unit, c.RequestsPerUnit = "connections", s.PerConnectionRate
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
	case sr.StartFraction < 0 || sr.StartFraction > 1:
		return fieldError("search.start_fraction", "want a fraction of the calibrated capacity in (0, 1], got %g", sr.StartFraction)
	case sr.StartFraction > 0 && (s.Scaling == nil || s.Scaling.Fraction <= 0):
		return fieldError("search.start_fraction", "starts from the capacity the cells' calibration measures: give scaling.fraction, or use start_rate alone")
	case sr.Growth != 0 && sr.Growth <= 1:
		return fieldError("search.growth", "must be above 1, got %g", sr.Growth)
	case sr.Trial < 0:
		return fieldError("search.trial", "must not be negative")
	case sr.Trials < 0 || sr.Retries < 0 || sr.MaxTrials < 0 || sr.Resamples < 0:
		return fieldError("search.trials", "counts (trials, retries, max_trials, resamples) must not be negative")
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

// searchGrowAssumed is the number of trials the estimate assumes a
// search takes to see the SLO both met and broken: a few doublings.
const searchGrowAssumed = 5

// searchGrowCalibrated is that number for a search that starts from a
// fraction of the mesh's calibrated capacity: one doubling or two.
const searchGrowCalibrated = 2

// searchEstimate is a search study's expected duration: per mesh, the
// assumed growing trials and the locating ones, each at least the trial
// length (their measured time at most the budget), each with its warm-up
// and a mesh installation (the meshes interleave), and one deployment.
func (s *Study) searchEstimate(cfg search.Config) time.Duration {
	st := setupTimes[s.Platform.Type]
	per := st.install + s.Load.Warmup.D()
	grow := searchGrowAssumed
	if s.Search.StartFraction > 0 {
		grow = searchGrowCalibrated
	}
	trials := grow + cfg.Trials
	measured := time.Duration(trials) * cfg.Trial
	if cfg.Budget > 0 && measured > cfg.Budget {
		trials = int(float64(trials) * float64(cfg.Budget) / float64(measured))
		measured = cfg.Budget
	}
	return st.deploy + time.Duration(len(s.Meshes))*(measured+time.Duration(trials)*per)
}
