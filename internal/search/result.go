package search

import (
	"fmt"
	"math"
	"strings"
)

// Result is a finished search: the capacity with its 95% interval, or a
// bound, the fit it came from, and every trial.
type Result struct {
	SLO SLO `json:"slo"`
	// Kind is what RPS is: FormInterval, an estimate with its interval;
	// FormBound, a lower bound (LowerBound); FormNone, no capacity (no
	// rate met the SLO). Empty in results older than schema 17: see Form.
	Kind string `json:"kind,omitempty"`
	// RPS is the capacity, in requests per second (or the search's unit):
	// the rate at which the fit of every trial's score puts a trial's
	// chance of breaking the SLO at BreachProbability. For a bound, the
	// bound. CILow and CIHigh are its interval at Level (0.95), present
	// only with an interval.
	RPS    float64 `json:"rps"`
	CILow  float64 `json:"ci_low,omitempty"`
	CIHigh float64 `json:"ci_high,omitempty"`
	// Level is the interval's confidence, or a bound's (one-sided, 0.975,
	// the lower end of a 95% interval); absent for a bound that is only
	// the highest rate the trials saw meet the SLO.
	Level float64 `json:"level,omitempty"`
	// LowerBound says RPS is a lower bound: the capacity is at least RPS.
	LowerBound bool `json:"lower_bound,omitempty"`
	// Lower is the highest rate that met the SLO below the lowest that
	// broke it, Upper that lowest one (0 when none did).
	Lower float64 `json:"lower_rps"`
	Upper float64 `json:"upper_rps,omitempty"`
	// BreachProbability is the chance of breaking the SLO that defines
	// the capacity, and Fit the model fitted to every conclusive trial
	// (absent when none could be).
	BreachProbability float64 `json:"breach_probability,omitempty"`
	Fit               *Fit    `json:"fit,omitempty"`
	// Resamples is how many bootstrap resamples of the whole search the
	// interval comes from; Failed how many gave no fit, left out.
	Resamples int `json:"resamples,omitempty"`
	Failed    int `json:"resamples_failed,omitempty"`
	// Config is the search's settings, defaults filled in, from which the
	// bootstrap replays its design; absent before schema 17.
	Config *Config `json:"config,omitempty"`
	// Complete is false when the search stopped short (its trial or time
	// budget); Note says why, what bounded the search (the generator's
	// limit, the highest rate allowed), and which trials were no
	// evidence.
	Complete bool    `json:"complete"`
	Note     string  `json:"note,omitempty"`
	Trials   []Trial `json:"trials"`
	// Replicates are the bootstrap's resamples, for intervals of figures
	// computed from several capacities (Ratio); not stored.
	Replicates []Replicate `json:"-"`
}

// What a result's RPS is (Result.Kind).
const (
	FormInterval = "interval"
	FormBound    = "bound"
	FormNone     = "none"
	// FormPoint is an estimate without an interval, which only results
	// older than schema 17 hold.
	FormPoint = "point"
)

// Form is what RPS is, Kind or, for older results, what their fields say:
// an older search stored a missing interval as ci_low = ci_high = rps.
func (r Result) Form() string {
	switch {
	case r.Kind != "":
		return r.Kind
	case r.LowerBound:
		return FormBound
	case r.RPS <= 0:
		return FormNone
	case r.CIHigh > r.CILow:
		return FormInterval
	}
	return FormPoint
}

// Replicate is one bootstrap resample of the whole search: D, its log
// capacity less the search's, and SE, its standard error.
type Replicate struct{ D, SE float64 }

// Level of the intervals.
const Level = 0.95

// finish ends the search.
func (s *Search) finish(end string) {
	s.done = true
	r := estimate(s.cfg, s.st.obs, s.st.located, s.stopped == "")
	r.Note = joinNote(joinNote(joinNote(joinNote(end, s.stopped), s.limit), s.lostNote()), r.Note)
	s.result = r
}

func (s *Search) lostNote() string {
	if s.lost == 0 {
		return ""
	}
	return fmt.Sprintf("%d of its %d locating trials stayed inconclusive past their retries and are no evidence", s.lost, s.st.located)
}

// Reestimate computes a finished search's result again from its Config,
// Trials and Complete, as stored: what a report reads, computed from the
// raw trials, with the bootstrap's Replicates. A result without a Config
// (older than schema 17) is returned as it is.
func Reestimate(r Result) Result {
	if r.Config == nil {
		return r
	}
	var os []obs
	located := 0
	for _, t := range r.Trials {
		switch {
		case t.Verdict != Inconclusive:
			os = append(os, observe(t.Rate, t.Score))
		case t.Attempt <= r.Config.Retries:
			continue // run again
		}
		if t.Phase == PhaseLocate {
			located++
		}
	}
	out := estimate(*r.Config, os, located, r.Complete)
	out.Note, out.Trials = r.Note, r.Trials
	return out
}

// estimate is what a search's conclusive trials (os, in the order they
// ran, located of them locating trials) say of the capacity: complete
// when its design ran to its end. A complete search whose trials met and
// broke the SLO and fit the model gives an estimate and its interval; one
// cut short gives the lower end of that interval as a bound, and one that
// never broke the SLO the highest rate that met it.
func estimate(cfg Config, os []obs, located int, complete bool) Result {
	cfg = cfg.WithDefaults()
	b := bracketOf(os)
	r := Result{SLO: cfg.SLO, Kind: FormNone, Lower: b.below, Upper: b.minFail, Complete: complete, Config: &cfg,
		BreachProbability: BreachProbability}
	bound := func(rate float64, why string) Result {
		r.Kind, r.LowerBound, r.RPS = FormBound, true, rate
		r.Note = joinNote(r.Note, why)
		return r
	}
	switch {
	case b.maxPass == 0:
		return r
	case b.minFail == 0:
		r.Lower = b.maxPass
		return bound(b.maxPass, fmt.Sprintf("the SLO held at every rate tried, up to %s %s: the capacity is at least that, and no trial says where it breaks", rateText(b.maxPass), cfg.Unit))
	}
	f, ok := fit(os, nil)
	if !ok {
		return bound(b.below, "the trials' scores fit no line rising with the rate, so there is no estimate; the bound is the highest rate that met the SLO below the lowest that broke it")
	}
	r.Fit = &f
	design := cfg
	design.Trials = located
	est, lo, hi, reps, failed := design.bootstrap(f, os)
	r.Resamples, r.Failed, r.Replicates = cfg.Resamples, failed, reps
	if math.IsNaN(lo) {
		return bound(b.below, fmt.Sprintf("%d of %d bootstrap resamples of the search gave no fit, too many for an interval; the bound is the highest rate that met the SLO below the lowest that broke it", failed, cfg.Resamples))
	}
	if !complete {
		r.Level = 1 - (1-Level)/2
		return bound(math.Exp(lo), "cut short, the search gives no estimate: the bound is the lower end of the 95% interval its trials give (a 97.5% lower confidence bound)")
	}
	r.Kind, r.Level = FormInterval, Level
	r.RPS, r.CILow, r.CIHigh = math.Exp(est), math.Exp(lo), math.Exp(hi)
	return r
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

// Ratio is the ratio of two capacities from complete searches (a over b)
// with its interval at Level, from their bootstrap resamples paired in
// order (bootstrap-t of the difference of the logs); ok is false when
// either lacks an interval.
func Ratio(a, b Result) (ratio, lo, hi float64, ok bool) {
	if a.Form() != FormInterval || b.Form() != FormInterval || a.Fit == nil || b.Fit == nil ||
		len(a.Replicates) == 0 || len(b.Replicates) == 0 {
		return 0, 0, 0, false
	}
	d := math.Log(a.RPS) - math.Log(b.RPS)
	se := math.Hypot(a.Fit.SE, b.Fit.SE)
	n := min(len(a.Replicates), len(b.Replicates))
	ts := make([]float64, 0, n)
	for i := range n {
		x, y := a.Replicates[i], b.Replicates[i]
		ts = append(ts, (x.D-y.D)/math.Hypot(x.SE, y.SE))
	}
	tlo, thi := tails(ts)
	return math.Exp(d), math.Exp(d - thi*se), math.Exp(d - tlo*se), true
}

// Describe says what a result is, for a log line: "1200 req/s (95%
// interval 1100 to 1300)", "at least 1200 req/s (a bound: ...)".
func (r Result) Describe(unit string) string {
	switch r.Form() {
	case FormInterval:
		return fmt.Sprintf("%.1f %s (95%% interval %.1f to %.1f)", r.RPS, unit, r.CILow, r.CIHigh)
	case FormBound:
		return fmt.Sprintf("at least %.1f %s (a bound)", r.RPS, unit)
	case FormPoint:
		return fmt.Sprintf("%.1f %s (no interval)", r.RPS, unit)
	}
	return "none"
}

// String is the result as a log line, its note included.
func (r Result) String() string {
	unit := "req/s"
	if r.Config != nil {
		unit = r.Config.Unit
	}
	return strings.TrimSuffix(r.Describe(unit)+"; "+r.Note, "; ")
}
