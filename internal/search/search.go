package search

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Search is one search's state. Next says which trial to run, Record takes
// its outcome; a caller running several searches steps each in turn, so
// that their trials interleave. A Search is not safe for concurrent use.
type Search struct {
	cfg   Config
	phase string
	rate  float64 // the rate of the next trial
	lower float64 // the highest rate that met the SLO, 0 for none yet
	upper float64 // the lowest rate that broke it, 0 for none yet
	limit string  // why some rates could not be measured
	// limited says upper is a rate that could not be measured rather than
	// one that broke the SLO: confirmation then decides only the lower end.
	limited bool
	trials  []Trial
	spent   time.Duration // measured trial time so far

	attempt int // of the current step, from 1

	// Confirmation: full-length evidence per rate, and the factor by
	// which the bracket moves when a full-length verdict disagrees with
	// the short trials' (MLRsearch's external search: it starts at the
	// bracket's width and its excess over 1 doubles at each move).
	evidence map[float64]*evidence
	step     float64

	done   bool
	result Result
}

// evidence is what the full-length trials at one rate said: the trial
// time that met the SLO and that broke it, each conclusive trial's score,
// and whether the rate proved unmeasurable (inconclusive past its
// retries).
type evidence struct {
	pass, fail   time.Duration
	scores       []float64
	unmeasurable string
}

// class is a rate's verdict from its full-length evidence.
type class int

const (
	undecided class = iota
	met
	broken
	unmeasurable
)

// New starts a search.
func New(cfg Config) (*Search, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Search{cfg: cfg, phase: PhaseGrow, rate: cfg.Start, attempt: 1}, nil
}

// Config is the search's settings, defaults filled in.
func (s *Search) Config() Config { return s.cfg }

// Done reports whether the search has finished.
func (s *Search) Done() bool { return s.done }

// Trials are the trials recorded so far, in the order they ran.
func (s *Search) Trials() []Trial { return s.trials }

// Next is the trial to run next; false when the search is done.
func (s *Search) Next() (Step, bool) {
	if s.done {
		return Step{}, false
	}
	if s.phase != PhaseConfirm {
		return Step{Phase: s.phase, Rate: s.rate, Duration: s.cfg.Short}, true
	}
	n := 1
	if e := s.evidence[s.rate]; e != nil {
		n += len(e.scores)
	}
	return Step{Phase: PhaseConfirm, Rate: s.rate, Duration: s.cfg.Full, Repetition: n}, true
}

// Record takes the outcome of the trial Next asked for and returns it as
// recorded, verdict included.
func (s *Search) Record(o Outcome) Trial {
	step, ok := s.Next()
	if !ok {
		panic("search: Record after the search finished")
	}
	v, why := s.cfg.SLO.Judge(step.Rate, o)
	t := Trial{Step: step, Outcome: o, Verdict: v, Why: why, Attempt: s.attempt,
		P50Ms: ms(o.P50), P95Ms: ms(o.P95), P99Ms: ms(o.P99)}
	s.trials = append(s.trials, t)
	s.spent += step.Duration
	switch {
	case v == Inconclusive && s.attempt <= s.cfg.Retries:
		s.attempt++ // the same step again
	case s.phase == PhaseConfirm:
		s.attempt = 1
		s.confirmed(t)
	default:
		s.attempt = 1
		s.searched(t)
	}
	s.checkBudget()
	return t
}

// searched moves grow and bisect on. An inconclusive trial, its retries
// spent, bounds the search from above as a broken SLO does, for no rate
// there can be measured; the result says so.
func (s *Search) searched(t Trial) {
	switch t.Verdict {
	case Pass:
		s.lower = t.Rate
	case Fail:
		s.upper, s.limited = t.Rate, false
		s.limit = "" // a measured bound replaces one that could not be measured
	case Inconclusive:
		s.upper, s.limited = t.Rate, true
		s.limit = fmt.Sprintf("trials at %s %s and above could not be measured (%s)", rateText(t.Rate), s.cfg.Unit, t.Why)
	}
	switch {
	case s.lower == 0 && s.upper > 0:
		// The SLO broke at the start: shrink.
		s.rate = roundRate(s.upper / s.cfg.Growth)
		if s.rate < s.cfg.MinRate {
			if s.limited {
				s.finish("no rate could be measured")
			} else {
				s.finish(fmt.Sprintf("the SLO is not met even at %s %s", rateText(s.upper), s.cfg.Unit))
			}
		}
	case s.upper == 0:
		s.rate = roundRate(s.lower * s.cfg.Growth)
		if s.cfg.MaxRate > 0 && s.lower >= s.cfg.MaxRate {
			s.limit = fmt.Sprintf("the SLO held up to the highest rate allowed, %s %s", rateText(s.cfg.MaxRate), s.cfg.Unit)
			s.startConfirm()
		} else if s.cfg.MaxRate > 0 {
			s.rate = min(s.rate, s.cfg.MaxRate)
		}
	case (s.upper-s.lower)/s.lower > s.cfg.Precision:
		s.phase = PhaseBisect
		s.rate = roundRate((s.lower + s.upper) / 2)
	default:
		s.startConfirm()
	}
}

// startConfirm begins the confirmation: the short trials' bracket is now
// to be decided by full-length trials.
func (s *Search) startConfirm() {
	s.phase, s.evidence = PhaseConfirm, map[float64]*evidence{}
	s.step = 1 + s.cfg.Precision
	if s.hasUpper() {
		s.step = max(s.step, s.upper/s.lower)
	}
	s.advance()
}

// confirmed adds a full-length trial to its rate's evidence and moves on.
func (s *Search) confirmed(t Trial) {
	e := s.evidence[t.Rate]
	if e == nil {
		e = &evidence{}
		s.evidence[t.Rate] = e
	}
	switch t.Verdict {
	case Pass:
		e.pass += t.Duration
	case Fail:
		e.fail += t.Duration
	case Inconclusive:
		e.unmeasurable = t.Why
		s.advance()
		return
	}
	score, _ := s.cfg.SLO.Score(t.Rate, t.Outcome)
	e.scores = append(e.scores, score)
	s.advance()
}

// classify is a rate's verdict by the exceed-ratio rule: broken once its
// failing full-length time exceeds ExceedRatio of the goal (more trials
// could not make it met), met once its passing time reaches the rest of
// the goal, undecided until then.
func (s *Search) classify(rate float64) class {
	e := s.evidence[rate]
	if e == nil {
		return undecided
	}
	if e.unmeasurable != "" {
		return unmeasurable
	}
	goal := float64(s.cfg.Confirmations) * s.cfg.Full.Seconds()
	switch {
	case e.fail.Seconds() > s.cfg.ExceedRatio*goal:
		return broken
	case e.pass.Seconds() >= (1-s.cfg.ExceedRatio)*goal:
		return met
	}
	return undecided
}

// advance picks the next full-length trial, or finishes. Starting from the
// short trials' bracket it decides the lower end; when that is broken it
// steps down, when met it decides the upper end, and when that is met too
// it steps up, each step growing; with both ends decided it bisects with
// full-length trials to the precision. A rate once decided stays decided,
// and a step never passes a rate decided the other way, so the search
// ends.
func (s *Search) advance() {
	for {
		switch s.classify(s.lower) {
		case undecided:
			s.rate = s.lower
			return
		case broken, unmeasurable:
			if c := s.classify(s.lower); c == unmeasurable {
				s.limited = true
				s.limit = fmt.Sprintf("trials at %s %s and above could not be measured (%s)", rateText(s.lower), s.cfg.Unit, s.evidence[s.lower].unmeasurable)
			} else {
				s.limited, s.limit = false, ""
			}
			s.upper = s.lower
			s.lower = s.below(s.upper)
			if s.lower < s.cfg.MinRate {
				s.lower = 0
				if s.limited {
					s.finish("no rate could be measured in full-length trials")
				} else {
					s.finish(fmt.Sprintf("the SLO is not met in full-length trials even at %s %s", rateText(s.upper), s.cfg.Unit))
				}
				return
			}
			continue
		}
		// The lower end is met.
		if !s.hasUpper() {
			s.finish("")
			return
		}
		switch s.classify(s.upper) {
		case undecided:
			s.rate = s.upper
			return
		case unmeasurable:
			s.limited = true
			s.limit = fmt.Sprintf("trials at %s %s and above could not be measured (%s)", rateText(s.upper), s.cfg.Unit, s.evidence[s.upper].unmeasurable)
			s.finish("")
			return
		case met:
			s.lower = s.upper
			s.upper = s.above(s.lower)
			if s.upper == 0 {
				s.limit = fmt.Sprintf("the SLO held up to the highest rate allowed, %s %s", rateText(s.cfg.MaxRate), s.cfg.Unit)
				s.finish("")
				return
			}
			continue
		}
		// Both ends decided: bisect to the precision.
		mid := roundRate((s.lower + s.upper) / 2)
		if (s.upper-s.lower)/s.lower <= s.cfg.Precision || mid <= s.lower || mid >= s.upper {
			s.finish("")
			return
		}
		switch s.classify(mid) {
		case undecided:
			s.rate = mid
			return
		case met:
			s.lower = mid
		default:
			s.upper = mid
			s.limited = s.classify(mid) == unmeasurable
			if s.limited {
				s.limit = fmt.Sprintf("trials at %s %s and above could not be measured (%s)", rateText(mid), s.cfg.Unit, s.evidence[mid].unmeasurable)
			} else {
				s.limit = ""
			}
		}
	}
}

// below is the next lower end under a rate whose full-length verdict is
// broken: one step down, or the highest rate decided met on the way.
func (s *Search) below(rate float64) float64 {
	next := roundRate(rate / s.nextStep())
	for r := range s.evidence {
		if r < rate && r > next && s.classify(r) == met {
			next = r
		}
	}
	return next
}

// above is the next upper end over a rate whose full-length verdict is
// met: one step up (at most the highest rate allowed, 0 when that is the
// rate itself), or the lowest rate decided broken on the way.
func (s *Search) above(rate float64) float64 {
	next := roundRate(rate * s.nextStep())
	if s.cfg.MaxRate > 0 {
		if rate >= s.cfg.MaxRate {
			return 0
		}
		next = min(next, s.cfg.MaxRate)
	}
	for r := range s.evidence {
		if c := s.classify(r); r > rate && r < next && (c == broken || c == unmeasurable) {
			next = r
		}
	}
	return next
}

// nextStep is the factor of the next move, and doubles the excess of the
// one after.
func (s *Search) nextStep() float64 {
	f := s.step
	s.step = 1 + 2*(s.step-1)
	return f
}

// hasUpper says the bracket has an upper end that broke the SLO.
func (s *Search) hasUpper() bool { return s.upper > 0 && !s.limited }

// checkBudget ends a search that has used its trials or its time.
func (s *Search) checkBudget() {
	if s.done {
		return
	}
	if len(s.trials) >= s.cfg.MaxTrials {
		s.finish(fmt.Sprintf("stopped after %d trials, the most allowed", s.cfg.MaxTrials))
		return
	}
	if step, _ := s.Next(); s.cfg.Budget > 0 && s.spent+step.Duration > s.cfg.Budget {
		s.finish(fmt.Sprintf("stopped when its budget of %s of trials was spent", s.cfg.Budget))
	}
}

// Result is the search's outcome; valid once Done.
func (s *Search) Result() Result {
	r := s.result
	r.Trials = s.trials
	return r
}

// Run runs a search to the end, calling trial for each step and, when not
// nil, progress after each trial.
func Run(ctx context.Context, cfg Config, trial TrialFunc, progress func(Trial)) (Result, error) {
	s, err := New(cfg)
	if err != nil {
		return Result{}, err
	}
	for {
		step, ok := s.Next()
		if !ok {
			return s.Result(), nil
		}
		o, err := trial(ctx, step.Rate, step.Duration)
		if err != nil {
			return s.Result(), fmt.Errorf("trial at %s %s: %w", rateText(step.Rate), s.cfg.Unit, err)
		}
		t := s.Record(o)
		if progress != nil {
			progress(t)
		}
	}
}

// roundRate keeps rates readable: 0.1 req/s steps.
func roundRate(r float64) float64 { return math.Round(r*10) / 10 }

func rateText(r float64) string { return fmt.Sprintf("%.4g", r) }
