package load

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// poissonTimes claims n hits of an unbounded Poisson schedule at rate
// and returns their intended times.
func poissonTimes(rate float64, seed uint64, n int) []time.Duration {
	s := newSchedule(&Options{Rate: rate, Arrivals: ArrivalsPoisson, Seed: seed}, 0)
	out := make([]time.Duration, n)
	for i := range out {
		tk, ok := s.claim(0)
		if !ok {
			panic("an unbounded schedule ended")
		}
		out[i] = tk.intended
	}
	return out
}

// TestPoissonScheduleIsExponential draws 100,000 gaps of a Poisson
// schedule at 1,000/s and checks that they are what a Poisson process's
// are: of mean 1 ms, with a coefficient of variation of 1, independent of
// one another (lag-1 autocorrelation near 0), and exponential in shape
// (Kolmogorov-Smirnov distance to the exponential below its 1% critical
// value, 1.63/sqrt(n)). Evenly spaced sends fail every one of these but
// the mean: their KS distance is 0.63.
func TestPoissonScheduleIsExponential(t *testing.T) {
	t.Parallel()
	const (
		n    = 100_000
		rate = 1000.0
		mean = float64(time.Second) / rate
	)
	for _, seed := range []uint64{1, 42, 1 << 60} {
		times := poissonTimes(rate, seed, n+1)
		gaps := make([]float64, n)
		for i := range gaps {
			g := times[i+1] - times[i]
			if g < 0 {
				t.Fatalf("seed %d: hit %d due %v before hit %d", seed, i+1, -g, i)
			}
			gaps[i] = float64(g)
		}
		var sum, sq float64
		for _, g := range gaps {
			sum += g
		}
		m := sum / n
		for _, g := range gaps {
			sq += (g - m) * (g - m)
		}
		sd := math.Sqrt(sq / (n - 1))
		// The mean's standard error is mean/sqrt(n), 0.3%.
		if rel := math.Abs(m/mean - 1); rel > 0.015 {
			t.Errorf("seed %d: mean gap %.1f ns, want %.0f ns within 1.5%%", seed, m, mean)
		}
		if cv := sd / m; math.Abs(cv-1) > 0.02 {
			t.Errorf("seed %d: coefficient of variation %.4f, want 1 (exponential) within 0.02", seed, cv)
		}
		var cov float64
		for i := 1; i < n; i++ {
			cov += (gaps[i] - m) * (gaps[i-1] - m)
		}
		if r := cov / sq; math.Abs(r) > 4/math.Sqrt(n) {
			t.Errorf("seed %d: lag-1 autocorrelation %.4f: the gaps are not independent", seed, r)
		}
		t.Logf("seed %d: mean %.1f ns, CV %.4f, lag-1 r %.4f, KS %.4f", seed, m, sd/m, cov/sq, ksExponential(gaps, mean))
		if d, crit := ksExponential(gaps, mean), 1.63/math.Sqrt(n); d > crit {
			t.Errorf("seed %d: KS distance %.4f to the exponential of mean %.0f ns, want under %.4f", seed, d, mean, crit)
		}
	}
	even := make([]float64, n)
	for i := range even {
		even[i] = mean
	}
	if d := ksExponential(even, mean); d < 0.5 {
		t.Errorf("the KS check passes even gaps (distance %.3f): it could not fail", d)
	}
}

// ksExponential is the Kolmogorov-Smirnov distance between the sample's
// distribution and the exponential of the given mean.
func ksExponential(xs []float64, mean float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := float64(len(s))
	var d float64
	for i, x := range s {
		f := 1 - math.Exp(-x/mean)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d
}

// TestUniformScheduleIsExact checks that uniform arrivals, named or left
// at the default, stay exactly evenly spaced: hit i due at i/rate to the
// nanosecond, however long the run.
func TestUniformScheduleIsExact(t *testing.T) {
	t.Parallel()
	for _, arrivals := range []string{"", ArrivalsUniform} {
		s := newSchedule(&Options{Rate: 1000, Arrivals: arrivals}, 0)
		for i := range int64(100_000) {
			tk, ok := s.claim(0)
			if !ok {
				t.Fatalf("arrivals %q: an unbounded schedule ended at hit %d", arrivals, i)
			}
			if want := time.Duration(i) * time.Millisecond; tk.intended != want {
				t.Fatalf("arrivals %q: hit %d due at %v, want %v exactly", arrivals, i, tk.intended, want)
			}
		}
	}
}

// TestPoissonScheduleReproducible checks that a seed names one schedule,
// whichever connections claim its hits in whatever order, and that
// another seed gives another.
func TestPoissonScheduleReproducible(t *testing.T) {
	t.Parallel()
	const n = 20_000
	want := poissonTimes(500, 7, n)
	if again := poissonTimes(500, 7, n); !slices.Equal(again, want) {
		t.Fatal("the same seed gave another schedule")
	}
	if other := poissonTimes(500, 8, n); slices.Equal(other, want) {
		t.Fatal("seeds 7 and 8 gave the same schedule")
	}
	// Eight connections racing for the hits.
	s := newSchedule(&Options{Rate: 500, Arrivals: ArrivalsPoisson, Seed: 7, Requests: n}, 0)
	var (
		mu  sync.Mutex
		got []time.Duration
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				tk, ok := s.claim(0)
				if !ok {
					return
				}
				mu.Lock()
				got = append(got, tk.intended)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("racing connections claimed %d hits unlike the sequential schedule's %d", len(got), len(want))
	}
}

// TestPoissonScheduleBounds checks a Poisson schedule's warm-up and
// bounds: the hits due before the warm-up's end are warm-up hits, the
// measured phase starts at the warm-up's end exactly, a request bound
// counts measured hits only, and a duration bound ends at the first hit
// due at or after warm-up plus duration.
func TestPoissonScheduleBounds(t *testing.T) {
	t.Parallel()
	const warmup = 200 * time.Millisecond
	claimAll := func(o Options) (warm, measured []time.Duration, s *schedule) {
		s = newSchedule(&o, 0)
		for {
			tk, ok := s.claim(0)
			if !ok {
				return warm, measured, s
			}
			if tk.warmup {
				warm = append(warm, tk.intended)
			} else {
				measured = append(measured, tk.intended)
			}
		}
	}
	warm, measured, s := claimAll(Options{Rate: 1000, Arrivals: ArrivalsPoisson, Seed: 3, Warmup: warmup, Requests: 500})
	if s.measured() != warmup {
		t.Errorf("measured phase starts at %v, want the warm-up's end, %v", s.measured(), warmup)
	}
	if len(measured) != 500 {
		t.Errorf("%d measured hits, want the 500 requested", len(measured))
	}
	if len(warm) < 150 || len(warm) > 250 {
		t.Errorf("%d warm-up hits in %v at 1000/s, want about 200", len(warm), warmup)
	}
	for _, d := range warm {
		if d >= warmup {
			t.Fatalf("warm-up hit due at %v, after the warm-up", d)
		}
	}
	if measured[0] < warmup {
		t.Errorf("first measured hit due at %v, before the warm-up's end", measured[0])
	}
	_, measured, _ = claimAll(Options{Rate: 1000, Arrivals: ArrivalsPoisson, Seed: 3, Warmup: warmup, Duration: 2 * time.Second})
	if last := measured[len(measured)-1]; last >= warmup+2*time.Second {
		t.Errorf("hit due at %v, past the duration's end", last)
	}
	// Poisson(2000): the count is within 4 standard deviations.
	if n := len(measured); math.Abs(float64(n)-2000) > 4*math.Sqrt(2000) {
		t.Errorf("%d measured hits in 2 s at 1000/s, want about 2000", n)
	}
}

// TestPoissonAchievedRate checks that a Poisson schedule sent on time
// achieves its rate, whatever its draw's count, and that one sent late
// falls short.
func TestPoissonAchievedRate(t *testing.T) {
	t.Parallel()
	o := Options{Rate: 100, Arrivals: ArrivalsPoisson, Seed: 5, Warmup: time.Second, Duration: 10 * time.Second}
	s := newSchedule(&o, 0)
	var n int64
	var last time.Duration
	for {
		tk, ok := s.claim(0)
		if !ok {
			break
		}
		if !tk.warmup {
			n++
			last = tk.intended
		}
	}
	res := &Result{Requests: n}
	if got := achievedRate(res, s, last, last+time.Microsecond, last+time.Millisecond); math.Abs(got/o.Rate-1) > 0.001 {
		t.Errorf("sent on time (%d hits in 10 s): achieved %.3f/s, want the rate, %g/s", n, got, o.Rate)
	}
	if got := achievedRate(res, s, last, last+2*time.Second, last+2*time.Second); got > 0.9*o.Rate {
		t.Errorf("the last send 2 s late in a 10 s phase: achieved %.3f/s, want about 83/s", got)
	}
}

// TestPoissonGapsDoNotAllocate: the engine draws a gap per request.
func TestPoissonGapsDoNotAllocate(t *testing.T) {
	s := newSchedule(&Options{Rate: 1e6, Arrivals: ArrivalsPoisson, Seed: 1}, 0)
	if a := testing.AllocsPerRun(1000, func() { s.claim(0) }); a != 0 {
		t.Errorf("a Poisson claim allocates %v times", a)
	}
}

func TestArrivalsOptions(t *testing.T) {
	t.Parallel()
	base := Options{URL: "http://127.0.0.1:1/", Connections: 1, Duration: time.Second}
	tests := []struct {
		name      string
		edit      func(*Options)
		wantField string
	}{
		{name: "poisson open loop", edit: func(o *Options) { o.Rate, o.Arrivals = 10, ArrivalsPoisson }},
		{name: "uniform open loop", edit: func(o *Options) { o.Rate, o.Arrivals = 10, ArrivalsUniform }},
		{name: "unknown process", edit: func(o *Options) { o.Rate, o.Arrivals = 10, "bursty" }, wantField: "arrivals"},
		{name: "closed loop", edit: func(o *Options) { o.Arrivals = ArrivalsPoisson }, wantField: "arrivals"},
		{name: "seed without poisson", edit: func(o *Options) { o.Rate, o.Seed = 10, 3 }, wantField: "seed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			err := o.normalize()
			if tt.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.Arrivals == ArrivalsPoisson && o.Seed == 0 {
					t.Error("poisson arrivals left unseeded: the result would not say which schedule ran")
				}
				return
			}
			oe, ok := err.(*OptionError)
			if !ok || oe.Field != tt.wantField {
				t.Errorf("normalize = %v, want an error on %s", err, tt.wantField)
			}
		})
	}
}

func TestSeeds(t *testing.T) {
	t.Parallel()
	if SubSeed(9, 0) != 9 || SubSeed(0, 3) != 0 {
		t.Error("generator 0 and an unseeded cell keep their seed")
	}
	seen := map[uint64]bool{}
	for i := range 100 {
		s := SubSeed(9, i)
		if seen[s] {
			t.Fatalf("generator %d repeats another's seed", i)
		}
		seen[s] = true
	}
	if SeedOf(1, "a") == SeedOf(1, "b") || SeedOf(1, "a") == SeedOf(2, "a") || SeedOf(1, "a") != SeedOf(1, "a") {
		t.Error("SeedOf does not name one seed per study seed and key")
	}
}

// TestRunPoisson runs a short Poisson open loop against a local server:
// the seed is recorded, the same seed sends exactly as many requests in
// the measured phase again (the count is the schedule's), the generator
// keeps up (its achieved rate is the target's, though the draw's count is
// not), and the run is not taken for a distorted one.
func TestRunPoisson(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: an achieved rate within 1%")
	srv := newCountingServer(t, nil, nil)
	o := Options{URL: srv.URL, Connections: 8, Rate: 400, Arrivals: ArrivalsPoisson, Seed: 11, Warmup: 100 * time.Millisecond, Duration: time.Second}
	a, b := run(t, o), run(t, o)
	if a.Options.Seed != 11 || a.Options.Arrivals != ArrivalsPoisson {
		t.Errorf("result records arrivals %q seed %d", a.Options.Arrivals, a.Options.Seed)
	}
	if a.Requests != b.Requests {
		t.Errorf("the same seed sent %d and %d requests", a.Requests, b.Requests)
	}
	if n := float64(a.Requests); math.Abs(n-400) > 4*math.Sqrt(400) {
		t.Errorf("%d requests in 1 s at 400/s", a.Requests)
	}
	if rel := math.Abs(a.AchievedRate/400 - 1); rel > 0.01 || a.Distorted {
		t.Errorf("achieved %.2f/s of 400/s (%d requests), distorted %v: %v", a.AchievedRate, a.Requests, a.Distorted, a.Warnings)
	}
	unseeded := o
	unseeded.Seed = 0
	if c := run(t, unseeded); c.Options.Seed == 0 {
		t.Error("an unseeded Poisson run does not record the seed it drew")
	}
}
