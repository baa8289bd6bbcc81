package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Truth is a synthetic system whose capacity is known, for validating the
// search by simulation: its p99 follows a queue's, base/(1 - rate/mu),
// where each trial's service rate mu is drawn about Mu (a machine whose
// speed varies from trial to trial), times a measurement noise, and with
// probability Spike times 3 (a bimodal p99, as the lab's tiered graph
// shows at high rates). Its capacity at a p99 limit is where a trial
// breaks it half the time, which Capacity finds.
type Truth struct {
	Name string
	// Mu is the median service rate; Base the p99 at no load, as a share
	// of the SLO's p99 limit.
	Mu, Base float64
	// MuNoise is the standard deviation of ln mu across trials, P99Noise
	// that of ln p99 within a trial's sampling.
	MuNoise, P99Noise float64
	// Spike is the chance that a trial's p99 is three times as high.
	Spike float64
	// Drift is the standard deviation of a random walk in ln mu, one step
	// a trial: a machine that slows and speeds over the search.
	Drift float64
}

// Truths are the systems bench/validity and the tests validate the
// search on, each with its capacity about capacity: queues with little
// and much noise, a bimodal p99, drift, and a foot near the SLO's limit.
func Truths(capacity float64) []Truth {
	mk := func(t Truth) Truth {
		// Scale Mu so that the capacity is near the one asked for.
		t.Mu = 1
		c := t.Capacity(1)
		t.Mu = capacity / c
		return t
	}
	return []Truth{
		mk(Truth{Name: "queue", Base: 0.2, MuNoise: 0.03, P99Noise: 0.1}),
		mk(Truth{Name: "quiet queue", Base: 0.2, MuNoise: 0.01, P99Noise: 0.05}),
		mk(Truth{Name: "noisy queue", Base: 0.2, MuNoise: 0.08, P99Noise: 0.2}),
		mk(Truth{Name: "bimodal p99", Base: 0.2, MuNoise: 0.03, P99Noise: 0.1, Spike: 0.2}),
		mk(Truth{Name: "drifting machine", Base: 0.2, MuNoise: 0.02, P99Noise: 0.1, Drift: 0.005}),
		mk(Truth{Name: "foot near the limit", Base: 0.6, MuNoise: 0.03, P99Noise: 0.1}),
	}
}

// lnScore draws a trial's log score at rate, the drift's offset added to
// ln mu.
func (t Truth) lnScore(rng *rand.Rand, rate, offset float64) float64 {
	mu := t.Mu * math.Exp(t.MuNoise*rng.NormFloat64()+offset)
	if rate >= mu {
		return math.Log(MaxScore)
	}
	s := math.Log(t.Base/(1-rate/mu)) + t.P99Noise*rng.NormFloat64()
	if rng.Float64() < t.Spike {
		s += math.Log(3)
	}
	return s
}

// Capacity is the truth's capacity: the rate at which a trial breaks the
// SLO with BreachProbability, without drift, found by bisection on
// simulated trials (200,000 at each rate, so within a few parts in ten
// thousand); seed seeds them.
func (t Truth) Capacity(seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	lo, hi := math.Log(t.Mu)-6, math.Log(t.Mu)
	for range 40 {
		m := (lo + hi) / 2
		n, breach := 200000, 0
		for range n {
			if t.lnScore(rng, math.Exp(m), 0) > 0 {
				breach++
			}
		}
		if float64(breach)/float64(n) > BreachProbability {
			hi = m
		} else {
			lo = m
		}
	}
	return math.Exp((lo + hi) / 2)
}

// trial is a TrialFunc on the truth: the outcome's p99 is the drawn score
// times the SLO's limit, its p50 a fifth of that, every request sent.
// Each trial's drift offset is appended to offsets.
func (t Truth) trial(slo SLO, rng *rand.Rand, offsets *[]float64) TrialFunc {
	var offset float64
	return func(_ context.Context, rate float64, d time.Duration) (Outcome, error) {
		offset += t.Drift * rng.NormFloat64()
		*offsets = append(*offsets, offset)
		s := t.lnScore(rng, rate, offset)
		p99 := time.Duration(math.Exp(s) * float64(slo.P99))
		return Outcome{Achieved: rate, Requests: int64(rate * d.Seconds()), P50: p99 / 5, P95: p99 / 2, P99: p99}, nil
	}
}

// Coverage is what simulated searches on one truth gave: how many ended
// with an interval, how many of those covered the truth's capacity, how
// many gave a bound and how many of those held (the capacity at least
// the bound), and the median relative width of the intervals and
// measured trial time of the searches.
type Coverage struct {
	Truth      string
	Capacity   float64
	Searches   int
	Intervals  int
	Covered    int
	Bounds     int
	BoundsHeld int
	// MedianWidth is (high - low) / capacity; MedianTime the measured
	// trial time of a search.
	MedianWidth float64
	MedianTime  time.Duration
}

// Rate is the share of intervals that covered the capacity.
func (c Coverage) Rate() float64 { return float64(c.Covered) / float64(max(c.Intervals, 1)) }

// IntervalShare is the share of searches that ended with an interval.
func (c Coverage) IntervalShare() float64 {
	return float64(c.Intervals) / float64(max(c.Searches, 1))
}

func (c Coverage) String() string {
	return fmt.Sprintf("%s (capacity %.4g): %d searches, %d with an interval (%.1f%%), %.1f%% of those covering it, median width %.1f%% of the capacity; %d bounds, %d held; median %s of trials",
		c.Truth, c.Capacity, c.Searches, c.Intervals, 100*c.IntervalShare(), 100*c.Rate(), 100*c.MedianWidth, c.Bounds, c.BoundsHeld, c.MedianTime)
}

// Simulate runs searches searches with cfg on the truth, each its own
// seed, and says how often their intervals covered its capacity: the
// validation of the estimator at a preset's settings (bench/validity, and
// the tests). cfg.SLO needs a p99 limit.
func Simulate(cfg Config, t Truth, searches int, seed uint64) (Coverage, error) {
	base := t.Capacity(seed)
	out := Coverage{Truth: t.Name, Capacity: base, Searches: searches}
	var widths []float64
	var times []time.Duration
	for i := range searches {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+i)))
		c := cfg
		c.Seed = seed ^ uint64(i)<<20
		var offsets []float64
		r, err := Run(context.Background(), c, t.trial(cfg.SLO, rng, &offsets), nil)
		if err != nil {
			return out, err
		}
		// A drifting machine's capacity is its capacity at the mean of
		// its speeds over the search's trials.
		var mean float64
		for _, o := range offsets {
			mean += o / float64(len(offsets))
		}
		truth := base * math.Exp(mean)
		var spent time.Duration
		for _, tr := range r.Trials {
			spent += tr.Duration
		}
		times = append(times, spent)
		switch r.Form() {
		case FormInterval:
			out.Intervals++
			if r.CILow <= truth && truth <= r.CIHigh {
				out.Covered++
			}
			widths = append(widths, (r.CIHigh-r.CILow)/truth)
		case FormBound:
			out.Bounds++
			if truth >= r.RPS {
				out.BoundsHeld++
			}
		}
	}
	if len(widths) > 0 {
		slices.Sort(widths)
		out.MedianWidth = widths[len(widths)/2]
	}
	slices.Sort(times)
	out.MedianTime = times[len(times)/2]
	return out, nil
}
