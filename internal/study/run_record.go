package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
)

// record fills a cell's result from its measurement and decides its
// status: failed when the platform saw a fault during it (a proxy
// restarted), or when more than maxErrorRate of its requests failed (its
// latency, of the requests that succeeded, would say nothing of the mesh
// that failed the others), distorted when the load side reached a limit
// of its own (a generator out of local ports or descriptors, whose
// failed requests are not the system's), when a generator
// says it shaped the result (saturated, or short of its rate), when the
// load node's CPUs were full or a closed loop fell short of its
// connections, ok otherwise. A distorted cell keeps its figures, marked,
// so that a report can leave it out of averages rather than silently
// include it. Host noise above noiseThreshold cores marks the cell noisy.
func record(cell *results.Cell, m platform.Measurement, noiseThreshold, maxErrorRate float64) {
	cell.Start, cell.End = m.Start.UTC(), m.End.UTC()
	cell.Generators, cell.Resources, cell.Host = make([]results.Generator, len(m.Generators)), m.Resources, m.Host
	for i, g := range m.Generators {
		cell.Generators[i] = results.GeneratorOf(g)
	}
	cell.HostNoise, cell.HostSlowdown, cell.Noisy = nil, 0, false
	if m.Host != nil {
		n := m.Host.Noise
		cell.HostNoise, cell.HostSlowdown, cell.Noisy = &n, m.Host.Slowdown, results.Noisy(m.Host, noiseThreshold)
	}
	for _, r := range m.Replicas {
		cell.Replicas = append(cell.Replicas, infra.ReplicaRequests(r))
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
	cell.NamespaceLatencyMs = perNamespace(m.Generators)
	cell.Status, cell.Reason = status(m.Generators, merged, m.Host, m.Faults, m.Limits, maxErrorRate)
}

// perNamespace is the mean over several generators (one per namespace)
// of each one's own latency figures; nil for fewer than two, or when one
// completed nothing.
func perNamespace(gens []load.Result) *results.Latency {
	if len(gens) < 2 {
		return nil
	}
	var sum load.LatencyMS
	for i := range gens {
		h := gens[i].Latency
		if h == nil || h.Count() == 0 {
			return nil
		}
		l := load.LatencyOf(h)
		sum.Min, sum.Mean, sum.P50, sum.P90 = sum.Min+l.Min, sum.Mean+l.Mean, sum.P50+l.P50, sum.P90+l.P90
		sum.P95, sum.P99, sum.P999, sum.Max = sum.P95+l.P95, sum.P99+l.P99, sum.P999+l.P999, sum.Max+l.Max
	}
	n := float64(len(gens))
	out := results.Latency{Min: sum.Min / n, Mean: sum.Mean / n, P50: sum.P50 / n, P90: sum.P90 / n,
		P95: sum.P95 / n, P99: sum.P99 / n, P999: sum.P999 / n, Max: sum.Max / n}
	return &out
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

// notHeld begins the reason of a cell during which the platform saw its
// data plane fault.
const notHeld = "the data plane did not hold: "

// atOwnLimit begins the reason of a distorted cell whose load side ran
// out of something of its own, so that its failures say nothing of the
// system under test.
const atOwnLimit = "the load side reached a limit of its own: "

func status(gens []load.Result, merged *load.Result, host *infra.HostCPU, faults, limits []string, maxErrorRate float64) (string, string) {
	for i := range gens {
		if why, own := gens[i].OwnLimit(); own {
			limits = append(limits, why)
		}
	}
	switch {
	case len(faults) > 0:
		return results.StatusFailed, notHeld + strings.Join(faults, "; ")
	case len(limits) > 0:
		return results.StatusDistorted, atOwnLimit + strings.Join(limits, "; ")
	case merged == nil || merged.Requests == 0:
		return results.StatusFailed, "no request completed"
	case merged.Failed() >= merged.Requests:
		return results.StatusFailed, "every request failed: " + describeErrors(merged)
	case merged.ErrorRate() > maxErrorRate:
		return results.StatusFailed, fmt.Sprintf("%d of %d requests failed (%.3g%%, over max_error_rate %g%%): %s",
			merged.Failed(), merged.Requests, 100*merged.ErrorRate(), 100*maxErrorRate, describeErrors(merged))
	}
	var distorted int
	var warnings []string
	add := func(w string) {
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	for _, g := range gens {
		short, isShort := results.ClosedLoopShortfall(g)
		if !g.Distorted && !isShort {
			continue
		}
		distorted++
		for _, w := range g.Warnings {
			add(w)
		}
		if isShort {
			add(short)
		}
	}
	node, full := results.LoadNodeSaturated(host)
	if distorted == 0 && !full {
		return results.StatusOK, ""
	}
	var reason string
	if distorted > 0 {
		reason = fmt.Sprintf("%d of %d load generators distorted the result", distorted, len(gens))
		if len(warnings) > 0 {
			reason += ": " + strings.Join(warnings, "; ")
		}
	}
	if full {
		reason = joinNote(reason, node)
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
