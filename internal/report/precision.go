package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/results"
)

// precision says how many rounds ran and why no more did, and what the
// host-noise guard found: the cells re-run, and those that stayed noisy.
func (b *builder) precision() Section {
	s := Section{ID: "precision", Title: "Repetitions and host noise"}
	ix := b.d.Index
	var items []string
	if r := ix.Rounds; r != nil {
		deps := ""
		if r.Deployments > 1 {
			deps = fmt.Sprintf(", in %d independent deployments (each its own platform, installations and calibration)", r.Deployments)
		}
		switch r.Stop {
		case "fixed":
			items = append(items, fmt.Sprintf("Rounds: %s%s, as the study fixed them.", plural(r.Ran, "interleaved round", "interleaved rounds"), deps))
		case "planned":
			items = append(items, fmt.Sprintf("Rounds: %s%s, planned from a pilot of %d (at most %d) for every mesh's p50 overhead to have a 95%% interval within ±%.0f%% of itself; "+
				"the count was decided from the pilot alone, never from the intervals as they narrowed.", plural(r.Ran, "interleaved round", "interleaved rounds"), deps, r.Min, r.Max, 100*r.CI))
		case "no-basis":
			items = append(items, fmt.Sprintf("Rounds: the pilot's %d%s; with no baseline and other mesh there was no overhead to plan more for.", r.Ran, deps))
		case "narrow":
			items = append(items, fmt.Sprintf("Rounds: %s (at least %d, at most %d); stopped because every mesh's p50 overhead had a 95%% interval within ±%.0f%% of itself. "+
				"That stopping rule (results before schema 17) favours samples that happen to bunch: these intervals cover less than they say.", plural(r.Ran, "interleaved round", "interleaved rounds"), r.Min, r.Max, 100*r.CI))
		case "max":
			items = append(items, fmt.Sprintf("Rounds: %d interleaved rounds, the maximum; stopped there although some mesh's p50 overhead still had a 95%% interval wider than ±%.0f%% of itself (at least %d rounds were planned).", r.Ran, 100*r.CI, r.Min))
		default:
			items = append(items, fmt.Sprintf("Rounds: %d interleaved rounds (at least %d, at most %d); stopped: %s.", r.Ran, r.Min, r.Max, r.Stop))
		}
	}
	if n := ix.Noise; n != nil {
		var rerun, still, unused []string
		var worst, slowest float64
		for _, c := range ix.Cells {
			if c.HostNoise != nil {
				worst = max(worst, *c.HostNoise)
			}
			slowest = max(slowest, c.HostSlowdown)
			if len(c.Attempts) > 0 {
				rerun = append(rerun, c.ID)
				unused = append(unused, attemptsText(c))
			}
			if c.Noisy {
				still = append(still, c.ID)
			}
		}
		items = append(items, fmt.Sprintf("Host noise: CPU used on the study's CPUs by anything outside the study (steal time included), measured during every cell; "+
			"a cell over %.3g cores is noisy and was run again at the end of the study, up to %d more times. The noisiest cell recorded %.3f cores.", n.Threshold, n.Retries, worst))
		if slowest > 0 {
			items = append(items, fmt.Sprintf("CPU speed: before and after every cell the lab timed a fixed piece of work on each of the study's CPUs, to see a shared host's contention that no counter shows (a busy hyperthread sibling, a lower clock); "+
				"a cell whose CPUs ran more than %.0f%% slower than at their fastest in the run is noisy too. The slowest cell's CPUs ran %.0f%% slower.", 100*results.SlowdownLimit, 100*slowest))
		}
		if len(n.Calibration) > 0 {
			var cal []string
			for _, m := range slices.Sorted(maps.Keys(n.Calibration)) {
				cal = append(cal, fmt.Sprintf("%s %.3f", m, n.Calibration[m]))
			}
			items = append(items, "Host noise during calibration, in cores: "+strings.Join(cal, ", ")+".")
		}
		if len(rerun) == 0 && len(still) == 0 {
			items = append(items, "No cell was noisy.")
		}
		if len(rerun) > 0 {
			items = append(items, fmt.Sprintf("%s noisy and run again at the end of the study: %s.", plural(len(rerun), "cell was", "cells were"), strings.Join(rerun, ", ")))
		}
		if len(still) > 0 {
			line := fmt.Sprintf("%d cells are noisy in the results and left out of every figure (see Excluded cells): %s.", len(still), strings.Join(still, ", "))
			if !ix.Complete {
				line += " The run stopped before it had re-run every noisy cell."
			}
			items = append(items, line)
		} else if len(rerun) > 0 {
			items = append(items, "Every re-run found the host quiet; the figures use the quiet attempts.")
		}
		if len(unused) > 0 {
			items = append(items, "Attempts whose figures are not used, each kept in its file: "+strings.Join(unused, "; ")+".")
		}
	}
	if len(items) > 0 {
		s.Blocks = append(s.Blocks, Block{List: items})
	}
	return s
}

func (b *builder) hostNoiseMeasured() bool { return b.d.Index.Noise != nil }

// attemptsText lists a cell's attempts other than the one its figures
// come from.
func attemptsText(s results.Summary) string {
	var parts []string
	for _, a := range s.Attempts {
		what := a.Status
		if a.Status != results.StatusFailed && a.Noisy {
			what = "noisy, " + results.Summary{HostNoise: a.HostNoise, HostSlowdown: a.HostSlowdown}.NoiseReason()
		}
		parts = append(parts, fmt.Sprintf("attempt %d (%s, %s)", a.Attempt, what, a.File))
	}
	return fmt.Sprintf("%s used attempt %d, not %s", s.ID, max(s.Attempt, 1), strings.Join(parts, ", "))
}
