package search

import (
	"fmt"
	"math"
	"strings"
)

// Result is a finished search: the capacity, its 95% interval, the
// bracket it was found in, and every trial that decided it.
type Result struct {
	SLO SLO `json:"slo"`
	// ExceedRatio is the share of a rate's full-length trial time that
	// could break the SLO with the rate still met (Config.ExceedRatio).
	ExceedRatio float64 `json:"exceed_ratio"`
	// RPS is the capacity in requests per second: the mean of the
	// estimates, one per full-length trial at the bracket's ends, each
	// where that trial's SLO score crosses 1 on the slope between the two
	// ends' mean scores. CILow and CIHigh are its 95% Student-t interval,
	// so that full-length trials that disagree widen it; equal to RPS
	// when only one estimate counted.
	RPS    float64 `json:"rps"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Lower is the highest rate that met the SLO and Upper the lowest that
	// broke it (0 when none did), as the search last bracketed them: by
	// full-length trials once confirmation decided them.
	Lower float64 `json:"lower_rps"`
	Upper float64 `json:"upper_rps,omitempty"`
	// LowerBound says no rate above Lower could be measured (the load
	// generator's limit, a host too noisy to measure on): the capacity is
	// at least RPS, which is Lower, and nothing bounds it from above, so
	// it has no interval and no estimates.
	LowerBound bool      `json:"lower_bound,omitempty"`
	Estimates  []float64 `json:"estimates_rps,omitempty"`
	// Complete is false when the search stopped short (its trial or time
	// budget, or the SLO unmet at the lowest rate); Note says why, what
	// bounded the search (the generator's limit, the highest rate
	// allowed), and where full-length trials disagreed.
	Complete bool    `json:"complete"`
	Note     string  `json:"note,omitempty"`
	Trials   []Trial `json:"trials"`
}

// finish ends the search with estimates from the full-length trials at
// the bracket's ends, or with the bracket's lower end when there are
// none.
func (s *Search) finish(stopped string) {
	s.done = true
	r := Result{SLO: s.cfg.SLO, ExceedRatio: s.cfg.ExceedRatio, Lower: s.lower, Upper: s.upper, Complete: stopped == ""}
	if s.lower == 0 {
		// No rate met the SLO: there is no capacity to estimate.
		r.Complete, r.Note = false, joinNote(stopped, s.limit)
		s.result = r
		return
	}
	if s.phase == PhaseConfirm && s.classify(s.lower) != met {
		// Stopped before the lower end was decided: it is the best guess,
		// not a confirmed one.
		r.Complete = false
	}
	if s.limited {
		// Nothing above the lower end could be measured: the capacity is
		// at least that, and where the SLO breaks is not known.
		r.LowerBound = true
		r.RPS, r.CILow, r.CIHigh = s.lower, s.lower, s.lower
		r.Note = joinNote(stopped, s.limit)
		s.result = r
		return
	}
	r.Estimates = s.estimates()
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
	r.Note = joinNote(joinNote(stopped, s.disagreement()), s.limit)
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

// scoreFloor and scoreCeiling bound the scores whose logarithms the
// estimates interpolate: a zero score (no latency limit measured) has no
// logarithm, and an infinite one (errors with no error allowed) no slope.
const scoreFloor, scoreCeiling = 1e-3, 1e3

// estimates are the capacity's estimates, one per conclusive full-length
// trial at the bracket's ends. The log of the SLO score is taken as linear
// in the rate between the ends, with the slope of the two ends' mean
// logs; each trial's estimate is where a line of that slope through its
// own score crosses 1. Trials that agree give estimates close together;
// one that disagrees with the rest (a bimodal p99) gives a distant one,
// and a wide interval. When the slope cannot be followed (no upper end,
// or noise inverted the ends) a trial that met the SLO estimates half a
// bracket above its rate and one that broke it half a bracket below.
// Estimates reach at most one bracket width beyond the bracket.
func (s *Search) estimates() []float64 {
	lo := s.evidence[s.lower]
	if lo == nil || len(lo.scores) == 0 {
		return nil
	}
	width := s.lower * s.cfg.Precision
	var hi *evidence
	if s.hasUpper() {
		width = s.upper - s.lower
		hi = s.evidence[s.upper]
	}
	logs := func(e *evidence) (xs []float64, mean float64) {
		for _, sc := range e.scores {
			x := math.Log(min(max(sc, scoreFloor), scoreCeiling))
			xs = append(xs, x)
			mean += x
		}
		return xs, mean / float64(len(xs))
	}
	type point struct{ rate, log float64 }
	var pts []point
	loLogs, loMean := logs(lo)
	for _, x := range loLogs {
		pts = append(pts, point{s.lower, x})
	}
	slope := math.NaN()
	if hi != nil && len(hi.scores) > 0 {
		hiLogs, hiMean := logs(hi)
		for _, x := range hiLogs {
			pts = append(pts, point{s.upper, x})
		}
		if hiMean > loMean {
			slope = (hiMean - loMean) / width
		}
	}
	top := s.lower + width
	if hi != nil {
		top = s.upper
	}
	var out []float64
	for _, p := range pts {
		var e float64
		switch {
		case !math.IsNaN(slope):
			e = p.rate - p.log/slope
		case hi == nil && p.log <= 0:
			e = p.rate // met at the highest rate measured: no more is known
		case p.log <= 0:
			e = p.rate + width/2
		default:
			e = p.rate - width/2
		}
		out = append(out, min(max(e, s.lower-width), top+width))
	}
	return out
}

// disagreement says where full-length trials at the bracket's ends
// disagreed with their end's verdict, which the interval then reflects.
func (s *Search) disagreement() string {
	var parts []string
	count := func(rate float64, broke bool) {
		e := s.evidence[rate]
		if e == nil {
			return
		}
		n := 0
		for _, sc := range e.scores {
			if sc > 1 == broke {
				n++
			}
		}
		if n == 0 {
			return
		}
		what := "broke the SLO"
		if !broke {
			what = "met it"
		}
		parts = append(parts, fmt.Sprintf("%d of %d at %s %s %s", n, len(e.scores), rateText(rate), s.cfg.Unit, what))
	}
	count(s.lower, true)
	if s.hasUpper() {
		count(s.upper, false)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("full-length trials disagreed (%s; a rate counts as met when at most %g%% of its %d full-length trials' time breaks the SLO), which widens the interval",
		strings.Join(parts, ", "), 100*s.cfg.ExceedRatio, s.cfg.Confirmations)
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
