package search

import (
	"context"
	"testing"
	"time"
)

var testSLO = SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}

// met is a trial that meets testSLO at any rate, every request sent.
func met(_ context.Context, rate float64, d time.Duration) (Outcome, error) {
	return Outcome{Achieved: rate, Requests: int64(rate * d.Seconds()), P50: time.Millisecond, P95: 2 * time.Millisecond, P99: 3 * time.Millisecond}, nil
}

// TestMaxRateEndsTheSearch: a system meeting the SLO at the highest rate
// allowed ends the search there, with a bound, after one trial at that
// rate (the rate read back from its log once compared below MaxRate, and
// the search tried it again until its trials ran out).
func TestMaxRateEndsTheSearch(t *testing.T) {
	r, err := Run(context.Background(), Config{SLO: testSLO, Start: 500, MaxRate: 1000, Trial: time.Second}, met, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trials) != 2 || r.Form() != FormBound || r.RPS != 1000 || !r.Complete {
		t.Errorf("%d trials, %s %g complete %v, want 2 trials and a bound of 1000: %s", len(r.Trials), r.Form(), r.RPS, r.Complete, r)
	}
}

// TestTrialCarriesMinRequests: a trial at a rate too low to send 1,000
// requests (a p99's) in the trial length runs until it has.
func TestTrialCarriesMinRequests(t *testing.T) {
	c := Config{SLO: testSLO, Start: 100, Trial: 2 * time.Second}.WithDefaults()
	if c.MinRequests != 1000 {
		t.Fatalf("min requests %d, want 1000 for a p99", c.MinRequests)
	}
	if d := c.duration(100); d != 10*time.Second {
		t.Errorf("trial at 100 req/s: %s, want 10s", d)
	}
	if d := c.duration(2000); d != 2*time.Second {
		t.Errorf("trial at 2000 req/s: %s, want the trial length 2s", d)
	}
}
