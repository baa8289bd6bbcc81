package load

import (
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Result is the flat record of one generator's measured phase. The runner,
// the report and the cost model all read it; Merge combines the results of
// several generators exactly.
type Result struct {
	Options Options   `json:"options"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`

	Requests    int64            `json:"requests"` // completed, errors included
	Errors      int64            `json:"errors"`
	StatusCodes map[int]int64    `json:"status_codes"`
	ErrorKinds  map[string]int64 `json:"error_kinds,omitempty"`

	// Latency holds every request that succeeded (a response other than a
	// 5xx), measured from its intended send time in open loop; failures
	// are counted by Failed, not timed into it. ByClass holds every
	// completed request by "2xx", "3xx", "4xx", "5xx" and "error". SendLag
	// holds how late each send left its schedule.
	Latency *metrics.Histogram            `json:"latency"`
	ByClass map[string]*metrics.Histogram `json:"by_class"`
	SendLag *metrics.Histogram            `json:"send_lag"`
	// LateSends counts sends that left their schedule more than 1 ms late.
	LateSends int64 `json:"late_sends"`
	// NewConnections counts the connections the measured phase's requests
	// opened (TCP connected, and TLS shaken hands for https), those
	// opened before the clock started not included.
	NewConnections int64 `json:"new_connections"`
	// Unopened counts, by error kind, the connections the generator could
	// not open before the clock started. Each one's first request dials
	// again, but an open loop sends on the connections that are idle, so
	// a run at many slow connections may never come to it: without this
	// count it would seem to have held connections it never had.
	Unopened map[string]int64 `json:"unopened,omitempty"`
	// Uncorrected holds open-loop latencies measured from the actual send
	// instead of the intended one: what a tool with coordinated omission
	// would report. Nil in closed loop, where the two are the same.
	Uncorrected *metrics.Histogram `json:"uncorrected,omitempty"`

	// WarmedUp is how long the warm-up of a closed loop with WarmupMax
	// took before its throughput settled (see schedule.settle); zero
	// without WarmupMax.
	WarmedUp time.Duration `json:"warmed_up,omitempty"`

	// AchievedRate is the send rate reached in the measured phase, in
	// requests per second. Open loop: sends over the time from the first
	// one's intended time to the last one's actual time plus one interval,
	// so that it equals the target when every send left on time; with
	// Poisson arrivals, the target times the schedule's span (its last
	// hit's intended time from the phase's start, plus a mean gap) over
	// that, so that it equals the target when every send left on time,
	// whatever the draw's count. Closed loop: requests over End - Start. Merging adds rates, since merged
	// generators ran side by side.
	AchievedRate float64 `json:"achieved_rate"`
	// ClientCores is the number of CPUs the generator could use.
	ClientCores int `json:"client_cores"`

	// ClientCPU is the CPU time the generator itself used in the measured
	// phase. Distorted says the generator, not the server, shaped the result
	// (saturated, or short of its target rate); Warnings say why.
	ClientCPU time.Duration `json:"client_cpu"`
	Distorted bool          `json:"distorted"`
	Warnings  []string      `json:"warnings,omitempty"`
}

// Failed is how many requests failed: no response, or a 5xx one.
func (r *Result) Failed() int64 { return Failed(r.Errors, r.StatusCodes) }

// Failed is how many requests failed of a result's errors (no response)
// and status codes: the errors and the 5xx responses.
func Failed(errors int64, statusCodes map[int]int64) int64 {
	n := errors
	for code, c := range statusCodes {
		if code >= 500 {
			n += c
		}
	}
	return n
}

// ErrorRate is the share of requests that failed; 0 with no request.
func (r *Result) ErrorRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Failed()) / float64(r.Requests)
}
