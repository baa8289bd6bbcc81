package search

import (
	"context"
	"fmt"
	"math"
)

// maxShifts bounds how often the confirmation rounds may send the search
// back when its full-length trials disagree with the short ones.
const maxShifts = 2

// Search is one search's state. Next says which trial to run, Record takes
// its outcome; a caller running several searches steps each in turn, so
// that their trials interleave. A Search is not safe for concurrent use.
type Search struct {
	cfg   Config
	phase string
	rate  float64 // the rate of the step being run in grow and bisect
	lower float64 // the highest rate that met the SLO, 0 for none yet
	upper float64 // the lowest rate that broke it, 0 for none yet
	limit string  // why some rates could not be measured
	// limited says upper is a rate that could not be measured rather than
	// one that broke the SLO: confirmation then tries only the lower end.
	limited bool
	trials  []Trial

	attempt int // of the current step, from 1

	// Confirmation: rounds of a trial at lower, then at upper.
	round  int       // the current round, from 1
	atHigh bool      // the current trial is the round's upper one
	scores []float64 // per round and end: score at lower, at upper; NaN when inconclusive
	shifts int
	// full says the search has gone back from confirmation: its grow and
	// bisect trials are now full-length, and grow and shrink move by step,
	// which starts at the bracket's width and doubles (relative to the
	// rate) at each move, as MLRsearch's external search does.
	full bool
	step float64

	done   bool
	result Result
}

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
		d := s.cfg.Short
		if s.full {
			d = s.cfg.Full
		}
		return Step{Phase: s.phase, Rate: s.rate, Duration: d}, true
	}
	rate := s.lower
	if s.atHigh {
		rate = s.upper
	}
	return Step{Phase: PhaseConfirm, Rate: rate, Duration: s.cfg.Full, Repetition: s.round}, true
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
	if v == Inconclusive && s.attempt <= s.cfg.Retries {
		s.attempt++ // the same step again
		s.checkBudget()
		return t
	}
	s.attempt = 1
	if s.phase == PhaseConfirm {
		s.confirmed(t)
	} else {
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
	case Inconclusive:
		s.upper, s.limited = t.Rate, true
		s.limit = fmt.Sprintf("trials at %s req/s and above could not be measured (%s)", rateText(t.Rate), t.Why)
	}
	switch {
	case s.lower == 0 && s.upper > 0:
		// The SLO broke at the start: shrink.
		s.rate = roundRate(s.upper / s.factor())
		if s.rate < s.cfg.MinRate {
			if s.limited {
				s.finish("no rate could be measured")
			} else {
				s.finish(fmt.Sprintf("the SLO is not met even at %s req/s", rateText(s.upper)))
			}
		}
	case s.upper == 0:
		s.rate = roundRate(s.lower * s.factor())
		if s.cfg.MaxRate > 0 && s.lower >= s.cfg.MaxRate {
			s.limit = fmt.Sprintf("the SLO held up to the highest rate allowed, %s req/s", rateText(s.cfg.MaxRate))
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

// factor is what the next grow or shrink multiplies or divides the rate
// by.
func (s *Search) factor() float64 {
	if !s.full {
		return s.cfg.Growth
	}
	f := s.step
	s.step = 1 + 2*(s.step-1)
	return f
}

func (s *Search) startConfirm() {
	s.phase, s.round, s.atHigh, s.scores = PhaseConfirm, 1, false, nil
}

// confirmed records a confirmation trial's score and, after the last
// round, either moves the bracket (when most full-length trials disagree
// with the short ones) or finishes.
func (s *Search) confirmed(t Trial) {
	score := math.NaN()
	if t.Verdict != Inconclusive {
		score, _ = s.cfg.SLO.Score(t.Rate, t.Outcome)
	}
	s.scores = append(s.scores, score)
	if !s.atHigh && s.hasUpper() {
		s.atHigh = true
		return
	}
	if !s.hasUpper() {
		s.scores = append(s.scores, math.NaN()) // no upper end to try
	}
	s.atHigh = false
	if s.round < s.cfg.Confirmations {
		s.round++
		return
	}
	lowFails, highPasses, n := 0, 0, 0
	for i := 0; i+1 < len(s.scores); i += 2 {
		if !math.IsNaN(s.scores[i]) {
			n++
			if s.scores[i] > 1 {
				lowFails++
			}
		}
		if h := s.scores[i+1]; !math.IsNaN(h) && h <= 1 {
			highPasses++
		}
	}
	width := 1 + s.cfg.Precision
	if s.upper > 0 {
		width = s.upper / s.lower
	}
	// When most full-length trials disagree with the short ones, the
	// search goes back: from the end that disagreed, it moves by a growing
	// step with full-length trials until the SLO's verdict changes, then
	// bisects and confirms again.
	switch {
	case s.shifts < maxShifts && n > 0 && 2*lowFails > n && s.lower/width >= s.cfg.MinRate:
		s.shifts++
		s.full, s.step, s.phase, s.scores = true, width, PhaseGrow, nil
		s.upper, s.lower, s.limited = s.lower, 0, false
		s.rate = roundRate(s.upper / s.factor())
	case s.shifts < maxShifts && s.hasUpper() && 2*highPasses > s.cfg.Confirmations &&
		(s.cfg.MaxRate == 0 || s.upper*width <= s.cfg.MaxRate):
		s.shifts++
		s.full, s.step, s.phase, s.scores = true, width, PhaseGrow, nil
		s.lower, s.upper = s.upper, 0
		s.rate = roundRate(s.lower * s.factor())
		if s.cfg.MaxRate > 0 {
			s.rate = min(s.rate, s.cfg.MaxRate)
		}
	default:
		s.finish("")
	}
}

// hasUpper says the bracket has an upper end that broke the SLO.
func (s *Search) hasUpper() bool { return s.upper > 0 && !s.limited }

// checkBudget ends a search that has used its trials.
func (s *Search) checkBudget() {
	if !s.done && len(s.trials) >= s.cfg.MaxTrials {
		s.finish(fmt.Sprintf("stopped after %d trials, the most allowed", s.cfg.MaxTrials))
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
			return s.Result(), fmt.Errorf("trial at %s req/s: %w", rateText(step.Rate), err)
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
