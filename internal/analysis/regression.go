package analysis

import "math"

// The regression gate: what makes a new result set (a new proxy release,
// a new mesh version) a regression against an old one.
//
// A figure regresses when the new is worse and the 95% interval of the
// difference excludes zero, and the median change is at least
// RegressionMinPct percent: an interval narrow enough to exclude zero can
// still hold a change too small to act on.

// RegressionMinPct is the smallest median change, in percent of the old
// figure, that the gate counts as a regression.
const RegressionMinPct = 5.0

// RegressionMetrics are the figures the gate judges: p50 and p99 latency,
// and the data plane's CPU per request.
var RegressionMetrics = []Metric{P50, P99, CPUPerRequest}

// IsRegression reports whether the change is one the gate counts: B worse
// than A beyond the difference's interval, by at least RegressionMinPct.
func (c Change) IsRegression() bool {
	return c.Regressed() && c.Diff.Pct.Valid() && math.Abs(c.Diff.Pct.Median) >= RegressionMinPct
}

// Regressions compares result set b (the new) with a (the old) mesh by
// mesh at each load configuration both hold, on RegressionMetrics, and
// returns the changes that are regressions; none when b is no worse.
func Regressions(a, b *Dataset) []Change {
	var out []Change
	for _, ch := range Compare(a, b, RegressionMetrics).Changes {
		if ch.IsRegression() {
			out = append(out, ch)
		}
	}
	return out
}

// CompareMeshes compares two meshes of one result set (such as one mesh
// under two proxy releases, interleaved in the same rounds) at each load
// configuration, on the metrics: each Change is newer minus older, named
// by the newer mesh.
func CompareMeshes(d *Dataset, older, newer string, ms []Metric) []Change {
	var out []Change
	for _, cfg := range d.Configs {
		gOld, gNew := d.Group(older, cfg), d.Group(newer, cfg)
		if gOld == nil || gNew == nil {
			continue
		}
		for _, m := range ms {
			vo, vn := gOld.Values(m), gNew.Values(m)
			if len(vo) == 0 || len(vn) == 0 {
				continue
			}
			out = append(out, Change{Mesh: newer, Config: cfg, Metric: m, Diff: Difference(vo, vn)})
		}
	}
	return out
}
