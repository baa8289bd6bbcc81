package analysis

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
)

// The regression gate: what makes a new result set (a new proxy release,
// a new mesh version) a regression against an old one.
//
// A figure regresses when the new is worse and the 95% interval of the
// difference excludes zero, and the median change is at least
// RegressionMinPct percent: an interval narrow enough to exclude zero can
// still hold a change too small to act on.

// ErrRegression is returned, wrapped, by a gate that found a regression:
// a comparison with --fail-on-regression, or a history's check.
var ErrRegression = errors.New("regression")

// RegressionMinPct is the smallest median change, in percent of the old
// figure, that the gate counts as a regression.
const RegressionMinPct = 5.0

// RegressionMetrics are the figures the gate judges: p50 and p99 latency,
// and the data plane's CPU per request.
var RegressionMetrics = []Metric{P50, P99, CPUPerRequest}

// IsRegression is the regression decision, the one the gate, the
// comparison and the report's releases all apply: on one of
// RegressionMetrics, B worse than A beyond the difference's interval, by
// at least RegressionMinPct.
func (c Change) IsRegression() bool {
	return slices.Contains(RegressionMetrics, c.Metric) && c.Regressed() && c.Diff.Pct.Valid() && math.Abs(c.Diff.Pct.Median) >= RegressionMinPct
}

// Regressions compares result set b (the new) with a (the old) mesh by
// mesh at each load configuration both hold, on RegressionMetrics, and
// returns the changes that are regressions; none when b is no worse.
func Regressions(a, b *Dataset) []Change {
	return Compare(a, b, RegressionMetrics).Regressions()
}

// Regressions returns the comparison's changes that the gate counts (see
// Change.IsRegression).
func (c *Comparison) Regressions() []Change {
	var out []Change
	for _, ch := range c.Changes {
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

// ReleasePair is two meshes of one result set that differ only in the
// proxy release they ran, such as one profile under two Envoy releases.
type ReleasePair struct {
	Older, Newer               string // mesh names
	OlderRelease, NewerRelease string
}

// ReleasePairs finds the meshes that share every setting but the proxy
// release, each pair older first. A mesh's release is what its cells'
// verification recorded, else its proxy_version; one that ran more than
// one release (a default Envoy replaced mid-study) is in no pair.
func (d *Dataset) ReleasePairs() []ReleasePair {
	type meshRelease struct {
		name, release string
		spec          mesh.MeshSpec
	}
	var ms []meshRelease
	for _, name := range d.Meshes {
		releases := map[string]bool{}
		var spec mesh.MeshSpec
		for _, cfg := range d.Configs {
			g := d.Group(name, cfg)
			if g == nil {
				continue
			}
			for _, r := range g.Reps {
				spec = r.MeshSpec
				releases[cmp.Or(mesh.EnvoyVersion(r.Summary.Verification), r.MeshSpec.ProxyVersion)] = true
			}
		}
		if len(releases) != 1 || releases[""] {
			continue
		}
		for v := range releases {
			spec.ProxyVersion = ""
			ms = append(ms, meshRelease{name: name, release: v, spec: spec})
		}
	}
	var out []ReleasePair
	for i, a := range ms {
		for _, b := range ms[i+1:] {
			if a.spec != b.spec || a.release == b.release {
				continue
			}
			if CompareReleases(a.release, b.release) > 0 {
				a, b = b, a
			}
			out = append(out, ReleasePair{Older: a.name, Newer: b.name, OlderRelease: a.release, NewerRelease: b.release})
		}
	}
	return out
}

// CompareReleases orders releases such as 1.38.3 and 1.40.0 by their
// numbers, part by part.
func CompareReleases(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea != nil || eb != nil {
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(na, nb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}
