package search

import (
	"os"
	"strconv"
	"testing"
	"time"
)

func TestSimulateExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIM_N"))
	if n == 0 {
		t.Skip("SIM_N unset")
	}
	trials, _ := strconv.Atoi(os.Getenv("SIM_TRIALS"))
	capacity, _ := strconv.ParseFloat(os.Getenv("SIM_CAP"), 64)
	if capacity == 0 {
		capacity = 3000
	}
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}, Start: 200, Trial: 2 * time.Second, Trials: trials, Resamples: 400}
	for _, tr := range Truths(capacity) {
		c, err := Simulate(cfg, tr, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(c)
	}
}

// TestCoverageAtQuickSettings: at the quick preset's search settings
// (from 200 req/s, trials of at least 2 s, 6 locating trials, at most 20,
// no budget), searches on a queue of known capacity end with an interval
// nearly always, and those intervals cover the capacity near their 95%.
// Bounded to seconds: 40 searches a truth, 400 resamples each.
func TestCoverageAtQuickSettings(t *testing.T) {
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}, Start: 200, Trial: 2 * time.Second,
		Trials: 6, MaxTrials: 20, Resamples: 400}
	for _, tr := range Truths(3000)[:2] {
		c, err := Simulate(cfg, tr, 40, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(c)
		if c.IntervalShare() < 0.9 || c.Rate() < 0.85 || c.BoundsHeld != c.Bounds {
			t.Errorf("%s: %.0f%% with an interval, %.1f%% covering, %d of %d bounds held; want at least 90%%, 85%%, all",
				tr.Name, 100*c.IntervalShare(), 100*c.Rate(), c.BoundsHeld, c.Bounds)
		}
	}
}

// TestCoverageOnMisfit: on the systems the model fits worst, a noisy
// queue (whose p99 is skewed: a slow trial's queue grows without bound)
// and a bimodal p99 (one trial in five three times as high), the interval
// covers the capacity more often than the bootstrap of the fitted line
// alone did: at these settings that covered 63.9% and 52.6% (the
// capacity estimated at the logistic line's crossing, the t quantiles
// unstretched, trials held below the highest rate tried). This guards the
// fix, not the 95%: bench/validity measures that, at the presets'
// settings and more searches.
func TestCoverageOnMisfit(t *testing.T) {
	cfg := Config{SLO: SLO{P99: 10 * time.Millisecond, MaxErrorRate: 0.001}, Start: 200, Trial: 2 * time.Second,
		Trials: 6, MaxTrials: 20, Resamples: 300}
	for _, tr := range Truths(3000) {
		if tr.Name != "noisy queue" && tr.Name != "bimodal p99" {
			continue
		}
		c, err := Simulate(cfg, tr, 40, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(c)
		want := map[string]float64{"noisy queue": 0.75, "bimodal p99": 0.65}[tr.Name]
		if c.Rate() < want || c.BoundsHeld != c.Bounds {
			t.Errorf("%s: %.1f%% covering, %d of %d bounds held; want at least %.0f%%, all", tr.Name, 100*c.Rate(), c.BoundsHeld, c.Bounds, 100*want)
		}
	}
}
