package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
)

// record fills a cell's result from its measurement and decides its
// status: failed when no request succeeded, distorted when a generator
// says it shaped the result (saturated, or short of its rate), ok
// otherwise. A distorted cell keeps its figures, marked, so that a report
// can leave it out of averages rather than silently include it.
func record(cell *results.Cell, m platform.Measurement) {
	cell.Start, cell.End = m.Start.UTC(), m.End.UTC()
	cell.Generators, cell.Resources = make([]results.Generator, len(m.Generators)), m.Resources
	for i, g := range m.Generators {
		cell.Generators[i] = results.GeneratorOf(g)
	}
	merged := merge(m.Generators)
	if merged != nil {
		g := results.GeneratorOf(*merged)
		cell.Merged = &g
		cell.Requests, cell.Errors, cell.AchievedRate = merged.Requests, merged.Errors, merged.AchievedRate
		if merged.Latency != nil && merged.Latency.Count() > 0 {
			cell.LatencyMs = results.LatencyOf(merged.Latency)
		}
	}
	cell.Status, cell.Reason = status(m.Generators, merged)
}

// merge combines the generators' results exactly; nil when there are none.
func merge(gens []load.Result) *load.Result {
	if len(gens) == 0 {
		return nil
	}
	m := &load.Result{}
	for i := range gens {
		m.Merge(&gens[i])
	}
	return m
}

func status(gens []load.Result, merged *load.Result) (string, string) {
	switch {
	case merged == nil || merged.Requests == 0:
		return results.StatusFailed, "no request completed"
	case merged.Errors >= merged.Requests:
		return results.StatusFailed, "every request failed: " + describeErrors(merged)
	}
	var distorted int
	var warnings []string
	for _, g := range gens {
		if !g.Distorted {
			continue
		}
		distorted++
		for _, w := range g.Warnings {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	if distorted == 0 {
		return results.StatusOK, ""
	}
	reason := fmt.Sprintf("%d of %d load generators distorted the result", distorted, len(gens))
	if len(warnings) > 0 {
		reason += ": " + strings.Join(warnings, "; ")
	}
	return results.StatusDistorted, reason
}

// describeErrors names the most frequent error kinds and status codes.
func describeErrors(r *load.Result) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.ErrorKinds)) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, r.ErrorKinds[k]))
	}
	for _, code := range slices.Sorted(maps.Keys(r.StatusCodes)) {
		if code >= 400 || code < 200 {
			parts = append(parts, fmt.Sprintf("HTTP %d x%d", code, r.StatusCodes[code]))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d errors", r.Errors)
	}
	return strings.Join(parts, ", ")
}
