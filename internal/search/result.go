package search

import (
	"math"
)

// Result is a finished search: the capacity, its 95% interval, the
// bracket it was found in, and every trial that decided it.
type Result struct {
	SLO SLO `json:"slo"`
	// RPS is the capacity in requests per second: the mean of the
	// confirmation rounds' estimates, each where that round's full-length
	// trials cross the SLO. CILow and CIHigh are its 95% Student-t
	// interval; equal to RPS when only one round counted.
	RPS    float64 `json:"rps"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Lower is the highest rate that met the SLO and Upper the lowest that
	// broke it (0 when none did), as the search last bracketed them.
	Lower     float64   `json:"lower_rps"`
	Upper     float64   `json:"upper_rps,omitempty"`
	Estimates []float64 `json:"estimates_rps,omitempty"`
	// Complete is false when the search stopped short (its trial budget,
	// or the SLO unmet at the lowest rate); Note says why, or what bounded
	// the search (the generator's limit, the highest rate allowed).
	Complete bool    `json:"complete"`
	Note     string  `json:"note,omitempty"`
	Trials   []Trial `json:"trials"`
}

// finish ends the search with the estimates of the confirmation rounds
// run so far, or the bracket's lower end when there are none.
func (s *Search) finish(stopped string) {
	s.done = true
	r := Result{SLO: s.cfg.SLO, Lower: s.lower, Upper: s.upper, Complete: stopped == ""}
	if s.lower == 0 {
		// No rate met the SLO: there is no capacity to estimate.
		r.Complete, r.Note = false, joinNote(stopped, s.limit)
		s.result = r
		return
	}
	for i := 0; i+1 < len(s.scores); i += 2 {
		if e, ok := s.estimate(s.scores[i], s.scores[i+1]); ok {
			r.Estimates = append(r.Estimates, e)
		}
	}
	if len(r.Estimates) == 0 {
		r.RPS, r.CILow, r.CIHigh = s.lower, s.lower, s.lower
		r.Complete = false
		if stopped == "" {
			stopped = "no confirmation trial was conclusive; the capacity is the last rate that met the SLO in a short trial"
		}
	} else {
		r.RPS, r.CILow, r.CIHigh = meanCI(r.Estimates)
		r.CILow = max(r.CILow, 0)
	}
	r.Note = joinNote(stopped, s.limit)
	s.result = r
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// estimate is one confirmation round's capacity: where the SLO score,
// interpolated linearly in its logarithm between the trials at the
// bracket's ends, crosses 1. A score that cannot be interpolated (one end
// inconclusive) gives no estimate; with no upper end the lower end is the
// estimate. An estimate reaches at most one bracket width beyond it.
func (s *Search) estimate(low, high float64) (float64, bool) {
	if math.IsNaN(low) {
		return 0, false
	}
	if !s.hasUpper() {
		return s.lower, low <= 1
	}
	if math.IsNaN(high) {
		return 0, false
	}
	width := s.upper - s.lower
	if high <= low || math.IsInf(high, 1) && low > 1 {
		// Noise inverted the two ends, or both broke the SLO on errors
		// alone: no slope to follow.
		if low <= 1 {
			return s.lower + width/2, true
		}
		return s.lower - width/2, true
	}
	if math.IsInf(high, 1) {
		return s.lower + width/2, true // met at one end, failed on errors at the other
	}
	const floor = 1e-9 // a zero score (no latency limit measured) has no logarithm
	l, h := math.Log(max(low, floor)), math.Log(max(high, floor))
	t := (0 - l) / (h - l)
	t = min(max(t, -1), 2)
	return s.lower + t*width, true
}

// meanCI is the mean of xs with its 95% Student-t interval.
func meanCI(xs []float64) (mean, lo, hi float64) {
	for _, x := range xs {
		mean += x
	}
	n := float64(len(xs))
	mean /= n
	if len(xs) < 2 {
		return mean, mean, mean
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := tQuantile(len(xs)-1) * math.Sqrt(ss/(n-1)/n)
	return mean, mean - half, mean + half
}

// tQuantile is Student's t 0.975 quantile for df degrees of freedom.
func tQuantile(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086}
	if df <= len(table) {
		return table[df-1]
	}
	return 1.96
}
