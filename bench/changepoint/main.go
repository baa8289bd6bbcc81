// Command changepoint validates the history's change-point detection by
// simulation, as the tests do at one size each, over series lengths and
// step sizes: for series with one known step (Gaussian noise of sd 1, the
// step at least a quarter of the series from either end), how often a
// change point lands within one point of it, beside a peer in the same
// run, a least-squares locator told there is exactly one step (what
// location can reach at that noise); and for A/A series (one release
// measured N times), how often detection finds a change that is not there.
// It also times detection on one series of each length.
//
//	go run ./bench/changepoint
//	go run ./bench/changepoint -trials 4000 -seed 7
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/history"
)

func main() {
	trials := flag.Int("trials", 1000, "series per cell of the table")
	seed := flag.Uint64("seed", 1, "seed of the synthetic series")
	flag.Parse()

	fmt.Printf("E-divisive means, permutation test: alpha %g, %d permutations, at least %d points a side\n\n",
		history.Alpha, history.Permutations, history.MinSegment)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "points\tstep (sd)\tlocated ±1\tdetected\toracle ±1\tlocated / oracle\t")
	for _, n := range []int{8, 10, 20, 40} {
		for _, step := range []float64{1, 2, 3, 4} {
			r := history.LocateSteps(history.StepTrials{Length: n, Margin: max(n/4, history.MinSegment), Trials: *trials, Step: step, Seed: *seed})
			ratio := 0.0
			if r.Oracle > 0 {
				ratio = r.Located / r.Oracle
			}
			fmt.Fprintf(tw, "%d\t%g\t%.3f\t%.3f\t%.3f\t%.2f\t\n", n, step, r.Located, r.Detected, r.Oracle, ratio)
		}
	}
	tw.Flush()

	fmt.Println()
	tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "A/A points\tseries with a false change point\tlimit\t")
	for _, n := range []int{8, 10, 20, 40} {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t\n", n, history.FalseAlarms(n, *trials, *seed+1), 1.0/20)
	}
	tw.Flush()

	fmt.Println()
	rng := rand.New(rand.NewPCG(*seed, 2))
	for _, n := range []int{10, 50, history.MaxSeries} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64()
			if i >= n/2 {
				xs[i] += 3
			}
		}
		start := time.Now()
		found := history.Detect(xs, *seed)
		fmt.Printf("detection on one series of %d points with a 3-sd step: %v, %d change point(s)\n", n, time.Since(start).Round(time.Millisecond), len(found))
	}
}
