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
	cfg    Config
	st     state
	trials []Trial
	spent  time.Duration // measured trial time so far

	next    Step
	attempt int // of the next step, from 1
	// ceiling is the lowest rate whose trials stayed inconclusive (the
	// generator's limit, a host too noisy to measure on): no rate from it
	// up can be measured. Zero for none.
	ceiling float64
	limit   string // why, for the result's note
	lost    int    // locating trials that stayed inconclusive
	stopped string // why the search ended before its design did
	done    bool
	result  Result
}

// state is what the search's design reads: the conclusive trials so far,
// how many locating trials have been spent, and the latest fit, from
// which the next one starts. The search and its bootstrap resamples step
// it alike (design.next).
type state struct {
	obs     []obs
	located int
	fit     *Fit
}

// New starts a search.
func New(cfg Config) (*Search, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Search{cfg: cfg, attempt: 1}
	s.plan()
	return s, nil
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
	return s.next, true
}

// Record takes the outcome of the trial Next asked for and returns it as
// recorded, verdict included.
func (s *Search) Record(o Outcome) Trial {
	if s.done {
		panic("search: Record after the search finished")
	}
	step := s.next
	v, why := s.cfg.SLO.Judge(step.Rate, o)
	t := Trial{Step: step, Outcome: o, Verdict: v, Why: why, Attempt: s.attempt,
		P50Ms: ms(o.P50), P95Ms: ms(o.P95), P99Ms: ms(o.P99)}
	if v != Inconclusive {
		score, _ := s.cfg.SLO.Score(step.Rate, o)
		t.Score = min(score, MaxScore)
	}
	s.trials = append(s.trials, t)
	s.spent += step.Duration
	switch {
	case v == Inconclusive && s.attempt <= s.cfg.Retries:
		s.attempt++ // the same step again
	case v == Inconclusive:
		s.attempt = 1
		s.unmeasurable(t)
	default:
		s.attempt = 1
		s.st.obs = append(s.st.obs, observe(step.Rate, t.Score))
		if step.Phase == PhaseLocate {
			s.st.located++
		}
	}
	if !s.done {
		s.plan()
	}
	return t
}

// unmeasurable takes a step whose trials stayed inconclusive: a locating
// trial is spent without evidence; while the rate grows, no rate from
// this one up can be measured.
func (s *Search) unmeasurable(t Trial) {
	if t.Phase == PhaseLocate {
		s.st.located++
		s.lost++
		return
	}
	if s.ceiling == 0 || t.Rate < s.ceiling {
		s.ceiling = t.Rate
		s.limit = fmt.Sprintf("trials at %s %s and above could not be measured (%s)", rateText(t.Rate), s.cfg.Unit, t.Why)
	}
}

// plan sets the next step, or finishes the search: when its design is
// done, or when the next trial would overrun its trials or its budget.
func (s *Search) plan() {
	if s.attempt > 1 {
		s.checkBudget()
		return
	}
	rate, phase, end := s.cfg.next(&s.st, s.ceiling)
	if end != "" || phase == "" {
		s.finish(end)
		return
	}
	s.next = Step{Phase: phase, Rate: rate, Duration: s.cfg.duration(rate)}
	s.checkBudget()
}

// checkBudget ends a search whose next trial would overrun its trials or
// its time.
func (s *Search) checkBudget() {
	switch {
	case len(s.trials) >= s.cfg.MaxTrials:
		s.stopped = fmt.Sprintf("stopped after %d trials, the most allowed", s.cfg.MaxTrials)
	case s.cfg.Budget > 0 && s.spent+s.next.Duration > s.cfg.Budget:
		s.stopped = fmt.Sprintf("stopped when its budget of %s of trials was spent (%s measured; the next trial needed %s)", s.cfg.Budget, s.spent, s.next.Duration)
	default:
		return
	}
	s.finish("")
}

// next is the search's design, a function of its state alone: the rate
// grows (or shrinks) by Growth until a trial has met the SLO and one has
// broken it; then each of Trials trials goes where the fit of every
// trial so far puts the capacity, within the rates already tried or half
// a step of growth past the highest, or, while no fit exists, halfway (in
// the log) between the highest rate that met the SLO below the lowest
// that broke it and that one. A noisy
// verdict moves the fit a little, not the search a bracket. end, when
// not empty, says why no rate is left to try; an empty phase with no
// end is a design run to its end.
func (c Config) next(st *state, ceiling float64) (rate float64, phase, end string) {
	if len(st.obs) == 0 {
		if ceiling > 0 {
			return 0, "", "no rate could be measured"
		}
		return c.Start, PhaseGrow, ""
	}
	b := bracketOf(st.obs)
	switch {
	case b.minFail == 0:
		switch {
		case ceiling > 0:
			return 0, "", ""
		case c.MaxRate > 0 && b.maxPass >= c.MaxRate:
			return 0, "", ""
		}
		rate = roundRate(b.maxPass * c.Growth)
		if c.MaxRate > 0 {
			rate = min(rate, c.MaxRate)
		}
		return rate, PhaseGrow, ""
	case b.maxPass == 0:
		low := b.minFail
		if ceiling > 0 {
			low = min(low, ceiling)
		}
		rate = roundRate(low / c.Growth)
		if rate < c.MinRate {
			return 0, "", fmt.Sprintf("the SLO is not met even at %s %s", rateText(b.minFail), c.Unit)
		}
		return rate, PhaseGrow, ""
	case st.located >= c.Trials:
		return 0, "", ""
	}
	rate = math.Sqrt(b.below * b.minFail)
	if f, ok := fit(st.obs, st.fit); ok {
		st.fit = &f
		// A trial may go a half step of growth past the highest rate
		// tried, no further, so that a fit is never extrapolated far, but
		// a search whose first trial broke the SLO by chance (a bimodal
		// p99's slow mode) is not held below that rate.
		hi := b.highest * math.Sqrt(c.Growth)
		if c.MaxRate > 0 {
			hi = min(hi, c.MaxRate)
		}
		if ceiling > 0 {
			hi = min(hi, max(b.highest, ceiling/math.Sqrt(c.Growth)))
		}
		rate = min(max(f.Capacity(), b.lowest), hi)
	} else {
		st.fit = nil
	}
	return roundRate(rate), PhaseLocate, ""
}

// bracket is what the trials' verdicts say about where the SLO breaks:
// the highest rate that met it and the lowest that broke it (0 for none),
// the highest that met it below that (below), and the range of rates
// tried.
type bracket struct {
	maxPass, minFail, below float64
	lowest, highest         float64
}

func bracketOf(os []obs) bracket {
	b := bracket{lowest: math.Inf(1)}
	for _, o := range os {
		// Rates are read back from their logs, rounded as they were tried.
		r := roundRate(math.Exp(o.x))
		b.lowest, b.highest = min(b.lowest, r), max(b.highest, r)
		if o.broke() {
			if b.minFail == 0 || r < b.minFail {
				b.minFail = r
			}
		} else {
			b.maxPass = max(b.maxPass, r)
		}
	}
	for _, o := range os {
		if r := roundRate(math.Exp(o.x)); !o.broke() && (b.minFail == 0 || r < b.minFail) {
			b.below = max(b.below, r)
		}
	}
	return b
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
