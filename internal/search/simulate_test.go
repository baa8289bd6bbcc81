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
