package search

import (
	"context"
	"time"
)

// Outcome is what one trial measured at its offered rate.
type Outcome struct {
	// Achieved is the rate the generators reached, in requests per second.
	Achieved      float64       `json:"achieved_rps"`
	P50, P95, P99 time.Duration `json:"-"`
	Requests      int64         `json:"requests"`
	Errors        int64         `json:"errors"`
	// Saturated says a load generator ran out of CPU, so that the figures
	// may be its own; Noisy says something outside the system under test
	// used the host's CPUs. Either makes the trial inconclusive, as does
	// Unmeasured; Reason says what was seen.
	Saturated bool `json:"saturated,omitempty"`
	Noisy     bool `json:"noisy,omitempty"`
	// Unmeasured says the trial produced no figures at all (the
	// measurement itself failed), which is no evidence either.
	Unmeasured bool   `json:"unmeasured,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// ErrorRate is the share of completed requests that failed.
func (o Outcome) ErrorRate() float64 {
	if o.Requests == 0 {
		return 0
	}
	return float64(o.Errors) / float64(o.Requests)
}

// TrialFunc runs one trial: load offered at rate requests per second for
// the measured duration (the caller adds any warm-up). An error means the
// trial could not run at all; a search stops on it.
type TrialFunc func(ctx context.Context, rate float64, duration time.Duration) (Outcome, error)

// Phases of a search. Results older than schema 17 also hold "bisect" and
// "confirm" trials, of a search that bisected a bracket with short trials
// and confirmed its ends with long ones.
const (
	// PhaseGrow: the rate grows (or shrinks) geometrically until the SLO
	// has been seen both met and broken.
	PhaseGrow = "grow"
	// PhaseLocate: each trial at the rate where the fit of every trial so
	// far puts the capacity.
	PhaseLocate = "locate"
)

// Step is the next trial a search wants.
type Step struct {
	Phase    string        `json:"phase"`
	Rate     float64       `json:"rate"`
	Duration time.Duration `json:"duration_ns"`
}

// Trial is one trial as the search recorded it.
type Trial struct {
	Step
	Outcome
	// P50Ms and P99Ms are the outcome's latencies in milliseconds, as
	// results store latencies.
	P50Ms   float64 `json:"p50_ms"`
	P95Ms   float64 `json:"p95_ms"`
	P99Ms   float64 `json:"p99_ms"`
	Verdict Verdict `json:"verdict"`
	// Score is the trial's SLO score (SLO.Score), at most MaxScore, which
	// the fit reads; 0 for an inconclusive trial.
	Score float64 `json:"score"`
	// Why says what broke the SLO, or why the trial is no evidence.
	Why string `json:"why,omitempty"`
	// Attempt counts runs of the same step from 1: an inconclusive trial
	// is run again, up to the configured retries.
	Attempt int `json:"attempt"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
