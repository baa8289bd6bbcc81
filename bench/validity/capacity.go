package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/meshbench/meshbench/internal/search"
	"github.com/meshbench/meshbench/internal/study"
)

// capacity simulates whole capacity searches at the presets' search
// settings on systems whose capacity is known (search.Truths: queues with
// little and much noise, a bimodal p99, a drifting machine, a foot near
// the SLO's limit), through the search's own code (search.Simulate: the
// same bisection, fit of every trial and bootstrap of the whole search),
// and measures how often a complete search's interval covers the
// capacity, and how often a search cut short by its budget gives a bound
// that holds (the capacity at least the bound, a 97.5% lower bound). A
// preset that starts each search at a fraction of the mesh's calibrated
// closed-loop capacity (search.start_fraction) starts at that fraction
// of the system's service rate.
func capacity(out io.Writer, searches int, seed uint64) (int, error) {
	if searches <= 0 {
		return 0, nil
	}
	failed := 0
	fmt.Fprintf(out, "\ncapacity at the SLO: %d simulated searches a system and preset, each its whole search and bootstrap; capacity about %.0f req/s\n", searches, capacityScale)
	fmt.Fprintf(out, "%-34s %-20s %9s %8s %9s %7s %7s %8s  %s\n", "preset", "system", "intervals", "shown", "coverage", "width", "bounds", "held", "done-when")
	for _, name := range []string{"quick", "capacity"} {
		s, _, err := study.Preset(name, study.PlatformOverride{})
		if err != nil {
			return failed, err
		}
		if s.Search == nil {
			return failed, fmt.Errorf("preset %s has no search", name)
		}
		sr := s.Search
		cfg := sr.Config()
		label := fmt.Sprintf("%s (%d trials%s)", name, cfg.Trials, budgetText(cfg))
		truths := search.Truths(capacityScale)
		results := make([]search.Coverage, len(truths))
		errs := make([]error, len(truths))
		// The systems are independent, each seeded: simulate them in
		// parallel.
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i, t := range truths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				c := cfg
				if f := sr.StartFraction; f > 0 {
					// The search starts at a fraction of the mesh's
					// calibrated closed-loop capacity: the system's
					// service rate, where a closed loop saturates.
					c.Start = math.Max(c.Start, math.Round(f*t.Mu))
				}
				results[i], errs[i] = search.Simulate(c, t, searches, seed)
			}()
		}
		wg.Wait()
		for i, t := range truths {
			c, err := results[i], errs[i]
			if err != nil {
				return failed, fmt.Errorf("%s on %s: %w", name, t.Name, err)
			}
			ok := true
			cov, width, held := "—", "—", "—"
			if c.Intervals > 0 {
				ok = passes(c.Rate(), search.Level)
				cov = fmt.Sprintf("%.1f%%", 100*c.Rate())
				width = fmt.Sprintf("%.1f%%", 100*c.MedianWidth)
			}
			if c.Bounds > 0 {
				h := float64(c.BoundsHeld) / float64(c.Bounds)
				ok = ok && passes(h, 1-(1-search.Level)/2)
				held = fmt.Sprintf("%.1f%%", 100*h)
			}
			if !ok {
				failed++
			}
			fmt.Fprintf(out, "%-34s %-20s %8.0f%% %7.1f%% %9s %7s %6.0f%% %8s  %s\n", label, t.Name, 100*c.IntervalShare(), 100*search.Level, cov,
				width, 100*float64(c.Bounds)/float64(c.Searches), held, verdict(ok))
		}
	}
	return failed, nil
}

// capacityScale is the simulated systems' capacity: the lab's baseline
// under quick runs at a few thousand requests a second.
const capacityScale = 3000.0

func budgetText(c search.Config) string {
	if c.Budget <= 0 {
		return ", no budget"
	}
	return ", budget " + c.Budget.String()
}
