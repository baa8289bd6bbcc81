package history

import (
	"math"
	"math/rand/v2"
)

// Validation by simulation: the detector run on synthetic series whose
// change points are known, which the tests assert on and bench/changepoint
// prints at more sizes.

// StepTrials describe synthetic series with one step: Length points of
// Gaussian noise (sd 1), plus Step from a position drawn uniformly at
// least Margin points from either end.
type StepTrials struct {
	Length, Margin, Trials int
	Step                   float64
	Seed                   uint64
}

// StepResult is how often detection found a trial's step.
type StepResult struct {
	// Located is the share of trials with a change point within one
	// point of the true step; Detected the share with any change point.
	Located, Detected float64
	// Oracle is the share a least-squares locator that knows there is
	// exactly one step puts within one point of it: a peer with more
	// knowledge than any detector has, and so what location can reach.
	Oracle float64
}

// LocateSteps runs the trials.
func LocateSteps(t StepTrials) StepResult {
	rng := rand.New(rand.NewPCG(t.Seed, 0x73746570))
	var located, detected, oracle int
	xs := make([]float64, t.Length)
	for trial := range t.Trials {
		k := t.Margin + rng.IntN(t.Length-2*t.Margin+1)
		for i := range xs {
			xs[i] = rng.NormFloat64()
			if i >= k {
				xs[i] += t.Step
			}
		}
		at, _ := edivisive(xs, uint64(trial))
		if len(at) > 0 {
			detected++
		}
		for _, a := range at {
			if a >= k-1 && a <= k+1 {
				located++
				break
			}
		}
		if o := leastSquaresStep(xs); o >= k-1 && o <= k+1 {
			oracle++
		}
	}
	n := float64(t.Trials)
	return StepResult{Located: float64(located) / n, Detected: float64(detected) / n, Oracle: float64(oracle) / n}
}

// FalseAlarms is the share of Trials series of Length points of pure
// noise (an A/A series: one release measured Length times) in which
// detection finds any change point.
func FalseAlarms(length, trials int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0x61612121))
	xs := make([]float64, length)
	alarms := 0
	for trial := range trials {
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		if at, _ := edivisive(xs, uint64(trial)); len(at) > 0 {
			alarms++
		}
	}
	return float64(alarms) / float64(trials)
}

// leastSquaresStep is the split of xs into two constant levels that
// leaves the least squared error, with MinSegment points on each side.
func leastSquaresStep(xs []float64) int {
	n := len(xs)
	total := 0.0
	for _, x := range xs {
		total += x
	}
	best, bestAt, left := math.Inf(-1), -1, 0.0
	for k := 1; k < n; k++ {
		left += xs[k-1]
		if k < MinSegment || n-k < MinSegment {
			continue
		}
		// Minimising the squared error is maximising this.
		m1, m2 := left/float64(k), (total-left)/float64(n-k)
		if s := float64(k) * float64(n-k) / float64(n) * (m1 - m2) * (m1 - m2); s > best {
			best, bestAt = s, k
		}
	}
	return bestAt
}

// Detect returns the change points of xs (the first point after each), as
// Analyze finds them, for a benchmark to time.
func Detect(xs []float64, seed uint64) []int {
	at, _ := edivisive(xs, seed)
	return at
}
