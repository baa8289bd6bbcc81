package load

import (
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Summary is the handful of figures every report quotes, computed from a
// Result; `meshbench load --output json` prints them at the top level.
type Summary struct {
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	StatusCodes   map[int]int64    `json:"status_codes"`
	ErrorKinds    map[string]int64 `json:"error_kinds,omitempty"`
	DurationS     float64          `json:"duration_s"`
	TargetRate    float64          `json:"target_rate,omitempty"`
	AchievedRate  float64          `json:"achieved_rate"`
	Throughput    float64          `json:"throughput"` // non-error responses per second
	LatencyMS     LatencyMS        `json:"latency_ms"`
	UncorrectedMS *LatencyMS       `json:"uncorrected_latency_ms,omitempty"`
	SendLagMS     LagMS            `json:"send_lag_ms"`
	LateSends     int64            `json:"late_sends"`
	// NewConnections are the connections the measured phase opened, and
	// NewConnectionRate the same a second.
	NewConnections    int64   `json:"new_connections"`
	NewConnectionRate float64 `json:"new_connection_rate"`
	ClientCPUS        float64 `json:"client_cpu_s"`
	// ClientCPUPerRequestUS is the generator's CPU per completed request.
	ClientCPUPerRequestUS float64 `json:"client_cpu_per_request_us"`
	// ClientCPUUtil is the share of the generator's CPUs it used.
	ClientCPUUtil float64  `json:"client_cpu_util"`
	Distorted     bool     `json:"distorted"`
	Warnings      []string `json:"warnings,omitempty"`
}

// LatencyMS is a latency distribution in milliseconds.
type LatencyMS struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// LagMS is the open-loop send lag in milliseconds.
type LagMS struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Summarize computes the summary figures of r.
func Summarize(r *Result) Summary {
	s := Summary{
		Requests:       r.Requests,
		Errors:         r.Errors,
		StatusCodes:    r.StatusCodes,
		ErrorKinds:     r.ErrorKinds,
		TargetRate:     r.Options.Rate,
		AchievedRate:   r.AchievedRate,
		LateSends:      r.LateSends,
		NewConnections: r.NewConnections,
		ClientCPUS:     r.ClientCPU.Seconds(),
		Distorted:      r.Distorted,
		Warnings:       r.Warnings,
	}
	if s.StatusCodes == nil {
		s.StatusCodes = map[int]int64{}
	}
	if d := r.End.Sub(r.Start); d > 0 {
		s.DurationS = d.Seconds()
		s.Throughput = float64(r.Requests-r.Errors) / s.DurationS
		s.NewConnectionRate = float64(r.NewConnections) / s.DurationS
		if r.ClientCores > 0 {
			s.ClientCPUUtil = s.ClientCPUS / (s.DurationS * float64(r.ClientCores))
		}
	}
	if r.Requests > 0 {
		s.ClientCPUPerRequestUS = r.ClientCPU.Seconds() * 1e6 / float64(r.Requests)
	}
	if r.Latency != nil {
		s.LatencyMS = LatencyOf(r.Latency)
	}
	if r.Uncorrected != nil && r.Uncorrected.Count() > 0 {
		u := LatencyOf(r.Uncorrected)
		s.UncorrectedMS = &u
	}
	if r.SendLag != nil && r.SendLag.Count() > 0 {
		s.SendLagMS = LagMS{P50: ms(r.SendLag.Percentile(50)), P99: ms(r.SendLag.Percentile(99)), Max: ms(r.SendLag.Max())}
	}
	return s
}

// LatencyOf reads a histogram's latency figures in milliseconds; an empty
// histogram gives zeros.
func LatencyOf(h *metrics.Histogram) LatencyMS {
	if h.Count() == 0 {
		return LatencyMS{}
	}
	return LatencyMS{
		Min:  ms(h.Min()),
		Mean: ms(h.Mean()),
		P50:  ms(h.Percentile(50)),
		P90:  ms(h.Percentile(90)),
		P95:  ms(h.Percentile(95)),
		P99:  ms(h.Percentile(99)),
		P999: ms(h.Percentile(99.9)),
		Max:  ms(h.Max()),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
