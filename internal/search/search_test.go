package search

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// server simulates a system whose p99 rises with the offered rate as an
// M/M/1 queue's does: p99 = ln(100) / (mu - rate). Its capacity at a p99
// limit L is therefore known exactly: mu - ln(100)/L.
type server struct {
	mu float64 // service rate, requests per second
	// noise multiplies each p99 by a factor in [1-noise, 1+noise].
	noise float64
	rng   *rand.Rand
	// longer multiplies the p99 of full-length trials: a system that
	// degrades with time, which short trials miss.
	longer float64
	full   time.Duration
	// errorsAbove makes 1% of requests fail above this rate.
	errorsAbove float64
	// generatorLimit saturates the generator above this rate.
	generatorLimit float64
	// noisyEvery makes every n-th trial noisy, with a wild p99.
	noisyEvery int
	trials     int
}

func (s *server) trial(_ context.Context, rate float64, d time.Duration) (Outcome, error) {
	s.trials++
	o := Outcome{Achieved: rate, Requests: int64(rate * d.Seconds())}
	p99 := 10.0 // seconds: overloaded
	if rate < s.mu {
		p99 = math.Log(100) / (s.mu - rate)
	}
	if s.noise > 0 {
		p99 *= 1 + s.noise*(2*s.rng.Float64()-1)
	}
	if s.longer > 0 && d >= s.full {
		p99 *= s.longer
	}
	o.P99 = time.Duration(p99 * float64(time.Second))
	o.P50 = o.P99 / 7
	if s.errorsAbove > 0 && rate > s.errorsAbove {
		o.Errors = o.Requests / 100
	}
	if s.generatorLimit > 0 && rate > s.generatorLimit {
		o.Saturated, o.Reason = true, "generator CPU at 97%"
	}
	if s.noisyEvery > 0 && s.trials%s.noisyEvery == 0 {
		o.Noisy, o.Reason = true, "1.2 cores of host noise"
		o.P99 *= 20
	}
	return o, nil
}

func truth(mu float64, limit time.Duration) float64 { return mu - math.Log(100)/limit.Seconds() }

func TestSearchFindsKnownCapacity(t *testing.T) {
	t.Parallel()
	slo := SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}
	for _, tc := range []struct {
		name      string
		mu        float64
		start     float64
		precision float64
		noise     float64
		growth    float64
	}{
		{name: "start below capacity", mu: 1500, start: 50, precision: 0.05},
		{name: "start above capacity shrinks", mu: 1500, start: 8000, precision: 0.05},
		{name: "fine precision", mu: 700, start: 10, precision: 0.01},
		{name: "slow growth", mu: 700, start: 100, precision: 0.05, growth: 1.3},
		{name: "noisy latency", mu: 3000, start: 100, precision: 0.05, noise: 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &server{mu: tc.mu, noise: tc.noise, rng: rand.New(rand.NewPCG(1, 2))}
			cfg := Config{SLO: slo, Start: tc.start, Precision: tc.precision, Growth: tc.growth,
				Short: time.Second, Full: 3 * time.Second}
			res, err := Run(context.Background(), cfg, srv.trial, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := truth(tc.mu, slo.P99)
			if math.Abs(res.RPS-want) > tc.precision*want {
				t.Errorf("capacity %.1f, want %.1f within %.0f%% (bracket %.1f..%.1f, note %q)",
					res.RPS, want, 100*tc.precision, res.Lower, res.Upper, res.Note)
			}
			if !res.Complete || res.Note != "" {
				t.Errorf("complete %v, note %q; want a complete search", res.Complete, res.Note)
			}
			if res.CILow > res.RPS || res.CIHigh < res.RPS {
				t.Errorf("interval %.1f..%.1f does not hold %.1f", res.CILow, res.CIHigh, res.RPS)
			}
			if len(res.Estimates) < 4 {
				t.Errorf("%d estimates, want one per full-length trial at both ends (at least 2 each)", len(res.Estimates))
			}
			assertPhases(t, res.Trials, time.Second, 3*time.Second)
		})
	}
}

// assertPhases checks that short trials come first and full-length
// trials last.
func assertPhases(t *testing.T, trials []Trial, short, full time.Duration) {
	t.Helper()
	confirming := false
	for i, tr := range trials {
		if tr.Phase == PhaseConfirm {
			confirming = true
			if tr.Duration != full {
				t.Errorf("trial %d: confirmation of %s, want %s", i, tr.Duration, full)
			}
			continue
		}
		if confirming {
			// Gone back after a confirmation disagreed: full-length trials.
			if tr.Duration != full {
				t.Errorf("trial %d: %s trial of %s after confirmation began, want %s", i, tr.Phase, tr.Duration, full)
			}
			continue
		}
		if tr.Duration != short {
			t.Errorf("trial %d: %s trial of %s, want %s", i, tr.Phase, tr.Duration, short)
		}
	}
	if !confirming {
		t.Error("no confirmation trial")
	}
}

func TestSearchErrorLimit(t *testing.T) {
	t.Parallel()
	// Latency would allow 1039 req/s, but 1% of requests fail above 600.
	srv := &server{mu: 1500, errorsAbove: 600}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}, Start: 100, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.RPS-600) > 0.05*600 {
		t.Errorf("capacity %.1f, want 600 within 5%%", res.RPS)
	}
	var sawErrors bool
	for _, tr := range res.Trials {
		sawErrors = sawErrors || tr.Verdict == Fail && strings.HasPrefix(tr.Why, "errors")
	}
	if !sawErrors {
		t.Error("no trial failed on its error rate")
	}
}

func TestSaturatedTrialsAreNoEvidence(t *testing.T) {
	t.Parallel()
	// The server would carry 1039 req/s; the generator saturates above 400.
	srv := &server{mu: 1500, generatorLimit: 400}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, Short: time.Second, Full: 2 * time.Second, Retries: 2}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	attempts := map[float64]int{}
	for _, tr := range res.Trials {
		if tr.Outcome.Saturated {
			if tr.Verdict != Inconclusive {
				t.Errorf("a saturated trial at %.1f is %s, want inconclusive", tr.Rate, tr.Verdict)
			}
			attempts[tr.Rate]++
		} else if tr.Verdict == Fail {
			t.Errorf("trial at %.1f failed, but the server meets the SLO there", tr.Rate)
		}
	}
	for rate, n := range attempts {
		if n != cfg.Retries+1 {
			t.Errorf("saturated at %.1f: %d attempts, want %d (the retries are bounded)", rate, n, cfg.Retries+1)
		}
	}
	if res.RPS > 400 || res.RPS < 400*0.95 {
		t.Errorf("capacity %.1f, want just under the generator's limit of 400", res.RPS)
	}
	if !strings.Contains(res.Note, "could not be measured") || !strings.Contains(res.Note, "saturated") {
		t.Errorf("note %q does not say the generator bounded the search", res.Note)
	}
	// Nothing above was measured: the capacity is a lower bound, the
	// last rate met, with no interval and no estimate of where it breaks.
	if !res.LowerBound || res.RPS != res.Lower || res.CILow != res.RPS || res.CIHigh != res.RPS || len(res.Estimates) != 0 {
		t.Errorf("result %+v: want a lower bound at the last rate met, without interval or estimates", res)
	}
}

func TestNoisyTrialsAreRetried(t *testing.T) {
	t.Parallel()
	// Every third trial is noisy, with a p99 20 times the truth: counted,
	// it would end the growth far too early.
	srv := &server{mu: 1500, noisyEvery: 3}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 50, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := truth(1500, 10*time.Millisecond)
	if math.Abs(res.RPS-want) > 0.05*want {
		t.Errorf("capacity %.1f, want %.1f within 5%%", res.RPS, want)
	}
	var noisy int
	for i, tr := range res.Trials {
		if !tr.Noisy {
			continue
		}
		noisy++
		if tr.Verdict != Inconclusive {
			t.Errorf("noisy trial %d is %s", i, tr.Verdict)
		}
		next := res.Trials[i+1]
		if next.Rate != tr.Rate || next.Duration != tr.Duration || next.Attempt != tr.Attempt+1 {
			t.Errorf("noisy trial %d at %.1f was not run again: next is attempt %d at %.1f", i, tr.Rate, next.Attempt, next.Rate)
		}
	}
	if noisy == 0 {
		t.Fatal("the simulation made no noisy trial")
	}
}

func TestConfirmationMovesTheBracket(t *testing.T) {
	t.Parallel()
	// Full-length trials see a p99 40% higher than short ones: the short
	// bracket is too optimistic and confirmation must move it down.
	srv := &server{mu: 1500, longer: 1.4, full: 4 * time.Second}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, Short: time.Second, Full: 4 * time.Second, Precision: 0.05}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	// At full length p99 = 1.4 ln(100)/(mu - r) <= 10 ms.
	want := 1500 - 1.4*math.Log(100)/0.010
	if math.Abs(res.RPS-want) > 0.05*want {
		t.Errorf("capacity %.1f, want the full-length answer %.1f within 5%% (bracket %.1f..%.1f)", res.RPS, want, res.Lower, res.Upper)
	}
}

func TestSLONotMetAtTheLowestRate(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 100} // p99 at 1 req/s is 46 ms
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 64, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RPS != 0 || res.Complete || !strings.Contains(res.Note, "not met") {
		t.Errorf("got capacity %.1f, complete %v, note %q; want none, incomplete, SLO not met", res.RPS, res.Complete, res.Note)
	}
}

func TestMaxRateAndBudget(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 100000}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, MaxRate: 1000, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RPS != 1000 || !strings.Contains(res.Note, "highest rate allowed, 1000 req/s") {
		t.Errorf("capacity %.1f, note %q; want 1000 req/s at the highest rate allowed", res.RPS, res.Note)
	}
	// A search over another quantity names it in its notes.
	unit := cfg
	unit.Unit = "connections"
	if res, err := Run(context.Background(), unit, srv.trial, nil); err != nil || !strings.Contains(res.Note, "1000 connections") {
		t.Errorf("note %q (%v); want it in connections", res.Note, err)
	}
	cfg.MaxRate, cfg.MaxTrials = 0, 7
	res, err = Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 7 || res.Complete || !strings.Contains(res.Note, "7 trials") {
		t.Errorf("%d trials, complete %v, note %q; want a stop after 7", len(res.Trials), res.Complete, res.Note)
	}
}

// Two searches stepped in turn, as a study interleaves meshes, reach the
// same answers as each run alone.
func TestInterleavedSearches(t *testing.T) {
	t.Parallel()
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, Short: time.Second, Full: 2 * time.Second}
	alone := map[float64]float64{}
	for _, mu := range []float64{800, 2000} {
		srv := &server{mu: mu}
		res, err := Run(context.Background(), cfg, srv.trial, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone[mu] = res.RPS
	}
	a, _ := New(cfg)
	b, _ := New(cfg)
	sa, sb := &server{mu: 800}, &server{mu: 2000}
	for !a.Done() || !b.Done() {
		for _, x := range []struct {
			s   *Search
			srv *server
		}{{a, sa}, {b, sb}} {
			if step, ok := x.s.Next(); ok {
				o, _ := x.srv.trial(context.Background(), step.Rate, step.Duration)
				x.s.Record(o)
			}
		}
	}
	if a.Result().RPS != alone[800] || b.Result().RPS != alone[2000] {
		t.Errorf("interleaved %.1f / %.1f, alone %.1f / %.1f", a.Result().RPS, b.Result().RPS, alone[800], alone[2000])
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{SLO: SLO{P99: time.Millisecond, MaxErrorRate: 0.001}, Start: 10}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"valid", func(*Config) {}, ""},
		{"no latency limit", func(c *Config) { c.SLO.P99 = 0 }, "p99"},
		{"error rate of one", func(c *Config) { c.SLO.MaxErrorRate = 1 }, "max_error_rate"},
		{"no start", func(c *Config) { c.Start = 0 }, "start_rate"},
		{"precision as percent", func(c *Config) { c.Precision = 5 }, "precision"},
		{"full shorter than short", func(c *Config) { c.Short, c.Full = 10*time.Second, time.Second }, "full"},
		{"max below start", func(c *Config) { c.MaxRate = 5 }, "max rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ok
			tc.edit(&c)
			_, err := New(c)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// With no upper end (the highest rate allowed met the SLO in short
// trials) failed confirmations send the search back down with
// full-length trials, to the full-length answer.
func TestConfirmationWithoutUpperEnd(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 900, longer: 1.5, full: 2 * time.Second}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, MaxRate: 400, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 900 - 1.5*math.Log(100)/0.010
	if math.Abs(res.RPS-want) > 0.05*want {
		t.Errorf("capacity %.1f (bracket %.1f..%.1f, note %q); want the full-length answer %.1f within 5%%", res.RPS, res.Lower, res.Upper, res.Note, want)
	}
	assertPhases(t, res.Trials, time.Second, 2*time.Second)
}

// A short trial that failed by chance ends the growth far too low; the
// full-length trials see the upper end pass and send the search up again.
func TestConfirmationRecoversFromASpuriousFail(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 1500}
	spurious := func(ctx context.Context, rate float64, d time.Duration) (Outcome, error) {
		o, err := srv.trial(ctx, rate, d)
		if srv.trials == 3 { // the grow trial at 400 req/s
			o.P99 = 50 * time.Millisecond
		}
		return o, err
	}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, spurious, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := truth(1500, 10*time.Millisecond)
	if math.Abs(res.RPS-want) > 0.05*want {
		t.Errorf("capacity %.1f (bracket %.1f..%.1f); want %.1f within 5%% despite the spurious fail at 400", res.RPS, res.Lower, res.Upper, want)
	}
}

func TestSLOJSON(t *testing.T) {
	t.Parallel()
	in := SLO{P99: 10 * time.Millisecond, P50: 1500 * time.Microsecond, MaxErrorRate: 0.001}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"p50_ms":1.5,"p99_ms":10,"max_error_rate":0.001,"text":"p50 \u003c= 1.5ms, p99 \u003c= 10ms, errors \u003c= 0.1%"}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var out SLO
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip: %+v, %v; want %+v", out, err, in)
	}
}

// A trial whose sends fell more than MaxShortfall behind the rate fails,
// whatever its latency: the requests it never sent have none.
func TestShortfallFails(t *testing.T) {
	t.Parallel()
	slo := SLO{P99: 10 * time.Millisecond}
	o := Outcome{Achieved: 900, Requests: 900, P99: time.Millisecond}
	if v, why := slo.Judge(1000, o); v != Fail || !strings.Contains(why, "short of the rate") {
		t.Errorf("10%% short: %s %q, want a fail naming the shortfall", v, why)
	}
	o.Achieved = 980
	if v, _ := slo.Judge(1000, o); v != Pass {
		t.Errorf("2%% short: %s, want pass", v)
	}
}

// The search goes no lower than the rate at which a short trial holds
// MinSamples requests: below it a p99 is the largest of a handful.
func TestMinRateDefault(t *testing.T) {
	t.Parallel()
	if got := (Config{Start: 1000, Short: 4 * time.Second}).WithDefaults().MinRate; got != 25 {
		t.Errorf("min rate %g, want 25 (100 requests in 4s)", got)
	}
	if got := (Config{Start: 10, Short: 4 * time.Second}).WithDefaults().MinRate; got != 10 {
		t.Errorf("min rate %g, want the start rate 10", got)
	}
}

// When the full-length trials fail everywhere the short ones passed, the
// search goes back down and ends with no capacity, not with an estimate
// from the abandoned bracket.
func TestNoCapacityAfterGoingBack(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 1500, longer: 100, full: 2 * time.Second}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, MinRate: 10, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RPS != 0 || res.CILow != 0 || res.CIHigh != 0 || len(res.Estimates) != 0 || res.Complete || !strings.Contains(res.Note, "not met") {
		t.Errorf("capacity %.1f (%.1f..%.1f), %d estimates, complete %v, note %q; want none, SLO not met",
			res.RPS, res.CILow, res.CIHigh, len(res.Estimates), res.Complete, res.Note)
	}
}

// When every trial is inconclusive the search says that nothing could be
// measured, not that the SLO broke.
func TestNothingMeasurable(t *testing.T) {
	t.Parallel()
	srv := &server{mu: 1500, generatorLimit: 1}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 50, MinRate: 25, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, srv.trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RPS != 0 || strings.Contains(res.Note, "not met") || !strings.Contains(res.Note, "no rate could be measured") || !strings.Contains(res.Note, "saturated") {
		t.Errorf("capacity %.1f, note %q; want none, nothing measurable, saturated", res.RPS, res.Note)
	}
}

// scripted runs a search whose trials' p99 a function of the step decides.
func scripted(p99 func(rate float64, d time.Duration, n int) time.Duration) TrialFunc {
	n := 0
	return func(_ context.Context, rate float64, d time.Duration) (Outcome, error) {
		n++
		p := p99(rate, d, n)
		return Outcome{Achieved: rate, Requests: int64(rate * d.Seconds()), P99: p, P50: p / 7}, nil
	}
}

// The exceed-ratio rule: a rate is met when at most ExceedRatio of its
// goal time (Confirmations full-length trials) breaks the SLO. At the
// default of one half, one bad trial in three leaves a rate met; with a
// strict ratio the same trial breaks it.
func TestExceedRatio(t *testing.T) {
	t.Parallel()
	// Short trials put the SLO's edge at 1000 req/s; every third
	// full-length trial has a 30 ms p99 wherever it runs.
	slo := SLO{P99: 10 * time.Millisecond}
	full := 0
	p99 := func(rate float64, d time.Duration, _ int) time.Duration {
		if rate > 1000 {
			return 50 * time.Millisecond
		}
		if d == 2*time.Second {
			full++
			if full%3 == 2 {
				return 30 * time.Millisecond
			}
		}
		return 5 * time.Millisecond
	}
	cfg := Config{SLO: slo, Start: 250, Short: time.Second, Full: 2 * time.Second, Precision: 0.05}
	res, err := Run(context.Background(), cfg, scripted(p99), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lower < 950 || res.Lower > 1000 || res.ExceedRatio != 0.5 {
		t.Errorf("met at %.1f (exceed ratio %g); want the short bracket's lower end, just under 1000, kept at 0.5", res.Lower, res.ExceedRatio)
	}
	if !strings.Contains(res.Note, "disagreed") || res.CIHigh-res.CILow < 0.02*res.RPS {
		t.Errorf("note %q, interval %.1f..%.1f; want the disagreement said and a wide interval", res.Note, res.CILow, res.CIHigh)
	}
	full = 0
	cfg.ExceedRatio = 0.01
	strict, err := Run(context.Background(), cfg, scripted(p99), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strict.Lower >= res.Lower {
		t.Errorf("strict: met at %.1f, want below %.1f: a single bad full-length trial breaks a rate", strict.Lower, res.Lower)
	}
}

// Full-length trials that disagree need more of them to decide a rate;
// the budget ends the search on time regardless, and the result says it
// stopped and that its trials disagreed.
func TestBudgetEndsADisagreeingSearch(t *testing.T) {
	t.Parallel()
	// Short trials put the edge at 1000 req/s; every other full-length
	// trial has a 200 ms p99 wherever it runs, so the lower end needs
	// three trials (met, broken, met) and the upper two: five in all,
	// over a budget that leaves room for four after ten short ones.
	p99 := func(rate float64, d time.Duration, n int) time.Duration {
		if d == 3*time.Second && n%2 == 0 {
			return 200 * time.Millisecond
		}
		return time.Duration(float64(10*time.Millisecond) * rate / 1000)
	}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 125, Short: time.Second, Full: 3 * time.Second, Budget: 22 * time.Second}
	res, err := Run(context.Background(), cfg, scripted(p99), nil)
	if err != nil {
		t.Fatal(err)
	}
	var spent time.Duration
	for _, tr := range res.Trials {
		spent += tr.Duration
	}
	if spent > cfg.Budget {
		t.Errorf("measured %s, over the budget of %s", spent, cfg.Budget)
	}
	if res.Complete || !strings.Contains(res.Note, "budget") || !strings.Contains(res.Note, "disagreed") {
		t.Errorf("complete %v, note %q; want a search stopped by its budget, saying its trials disagreed", res.Complete, res.Note)
	}
	if res.RPS <= 0 || res.CILow > res.RPS || res.CIHigh < res.RPS || res.CIHigh-res.CILow < 0.02*res.RPS {
		t.Errorf("capacity %.1f (%.1f..%.1f); want an estimate inside a wide interval", res.RPS, res.CILow, res.CIHigh)
	}
}

// When the full-length trials at the lower end break the SLO, the search
// steps down by the bracket's width (then twice, four times that: the
// step's excess doubles), not back to the start.
func TestConfirmationStepsDown(t *testing.T) {
	t.Parallel()
	// Short trials meet the SLO up to 1000 req/s, full-length ones up to 900.
	p99 := func(rate float64, d time.Duration, _ int) time.Duration {
		edge := 1000.0
		if d == 2*time.Second {
			edge = 900
		}
		return time.Duration(float64(10*time.Millisecond) * rate / edge)
	}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 125, Short: time.Second, Full: 2 * time.Second, Precision: 0.05}
	res, err := Run(context.Background(), cfg, scripted(p99), nil)
	if err != nil {
		t.Fatal(err)
	}
	var full []float64
	for _, tr := range res.Trials {
		if tr.Phase == PhaseConfirm && tr.Repetition == 1 {
			full = append(full, tr.Rate)
		}
	}
	// The short bracket is 1000..1031.2: down by 3.1%, then 6.2%.
	if len(full) < 4 || full[1] >= full[0] || full[0]/full[1] > 1.05 || full[1]/full[2] < full[0]/full[1] {
		t.Errorf("full-length rates %v: want a step down by the bracket's width, then a larger one", full)
	}
	if math.Abs(res.RPS-900) > 0.05*900 || !res.Complete {
		t.Errorf("capacity %.1f, complete %v, note %q; want 900 within 5%%", res.RPS, res.Complete, res.Note)
	}
}

// A bound the short trials could not measure past (a noisy host at 1700
// req/s) is no longer the search's bound once full-length trials break
// the SLO below it; the note must not blame the host for the capacity.
func TestMeasuredBoundReplacesAnUnmeasurableOne(t *testing.T) {
	t.Parallel()
	trial := func(_ context.Context, rate float64, d time.Duration) (Outcome, error) {
		edge := 1650.0
		if d == 2*time.Second {
			edge = 1300
		}
		p := time.Duration(float64(10*time.Millisecond) * rate / edge)
		o := Outcome{Achieved: rate, Requests: int64(rate * d.Seconds()), P99: p, P50: p / 7}
		if d == time.Second && rate >= 1700 {
			o.Noisy, o.Reason = true, "0.70 cores of host noise"
		}
		return o, nil
	}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond}, Start: 100, Short: time.Second, Full: 2 * time.Second}
	res, err := Run(context.Background(), cfg, trial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Note, "could not be measured") || math.Abs(res.RPS-1300) > 0.05*1300 {
		t.Errorf("capacity %.1f, note %q; want 1300 within 5%%, with no unmeasurable bound", res.RPS, res.Note)
	}
}
