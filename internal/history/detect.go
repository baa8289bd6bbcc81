package history

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
)

// A series is unstable when its noise, estimated from the differences
// between neighbouring points, is more than UnstablePct percent of its
// level: no change the regression gate would act on (RegressionMinPct) can
// be told from its noise. Unstable series are listed apart and do not
// gate, as conbench lists its unstable benchmarks apart.
const UnstablePct = 10.0

// Analysis is one series read for change points.
type Analysis struct {
	*Series
	// Level is the median of the points; Noise is the points' standard
	// deviation as their neighbours' differences estimate it
	// (median |x_i − x_{i−1}| / (0.6745·√2), which one step barely moves).
	Level, Noise float64
	// TooShort says the series has fewer than two MinSegments of points,
	// too few for a change point; Unstable that its noise is above
	// UnstablePct of its level.
	TooShort, Unstable bool
	// From is the first point detection looked at: the newest MaxSeries
	// are searched.
	From    int
	Changes []ChangePoint
}

// ChangePoint is one change in a series.
type ChangePoint struct {
	// At is the first point after the change (an index into Points).
	At int
	// P is the permutation test's p-value.
	P float64
	// Diff is the points after the change (to the next change point or
	// the end) against those before it (from the previous one or the
	// start): the change's size in the metric's unit and in percent,
	// each with its 95% bootstrap interval (package analysis, as the
	// report's comparisons compute them).
	Diff analysis.Diff
	// Provenance lists what changed between the last point before and the
	// first after, such as "Envoy 1.39.1 → 1.39.3".
	Provenance []string
}

// Worse reports whether the change made the metric worse.
func (c ChangePoint) Worse(m analysis.Metric) bool {
	if m.HigherIsBetter() {
		return c.Diff.Delta.Median < 0
	}
	return c.Diff.Delta.Median > 0
}

// Regression reports whether the change is one the gate counts: worse by
// at least analysis.RegressionMinPct percent of the level before.
func (c ChangePoint) Regression(m analysis.Metric) bool {
	return c.Worse(m) && c.Diff.Pct.Valid() && math.Abs(c.Diff.Pct.Median) >= analysis.RegressionMinPct
}

// Analyze looks for change points in a series.
func Analyze(s *Series) *Analysis {
	a := &Analysis{Series: s, From: max(0, len(s.Points)-MaxSeries)}
	xs := make([]float64, 0, len(s.Points)-a.From)
	for _, p := range s.Points[a.From:] {
		xs = append(xs, p.Value())
	}
	a.Level, a.Noise = analysis.Median(xs), noise(xs)
	if a.TooShort = len(xs) < 2*MinSegment; a.TooShort {
		return a
	}
	a.Unstable = a.Level == 0 || a.Noise > UnstablePct/100*math.Abs(a.Level)
	at, ps := edivisive(xs, seedOf(s.Key))
	bounds := segments(len(xs), at)
	for i, cut := range at {
		before, after := xs[bounds[i]:cut], xs[cut:bounds[i+2]]
		g := a.From + cut
		a.Changes = append(a.Changes, ChangePoint{
			At: g, P: ps[i], Diff: analysis.Between(before, after),
			Provenance: provenanceChanges(s.Points[g-1], s.Points[g]),
		})
	}
	return a
}

// noise estimates the standard deviation of the points from their
// neighbours' differences, which a step changes in one place only.
func noise(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	d := make([]float64, len(xs)-1)
	for i := range d {
		d[i] = math.Abs(xs[i+1] - xs[i])
	}
	return analysis.Median(d) / (0.6745 * math.Sqrt2)
}

// seedOf seeds a series' permutations with its key, so that the same
// history always gives the same change points.
func seedOf(k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.ID()))
	return h.Sum64()
}

// provenanceChanges lists what the history recorded differently for two
// points: the proxy release and build, istiod, the proxies'
// configuration, their facts, meshbench, Go, the kernel and host, and
// the run itself.
func provenanceChanges(a, b Point) []string {
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s → %s", what, cmp.Or(x, "not recorded"), cmp.Or(y, "not recorded")))
		}
	}
	diff("Envoy", a.Mesh.Release, b.Mesh.Release)
	if a.Mesh.Release == b.Mesh.Release {
		diff("Envoy build", a.Mesh.Build, b.Mesh.Build)
	}
	diff("istiod", a.Mesh.Istiod, b.Mesh.Istiod)
	diff("proxy configuration", a.Mesh.ConfigHash, b.Mesh.ConfigHash)
	diff("injected work", cmp.Or(a.Mesh.Facts[FactInjectedWork], "none"), cmp.Or(b.Mesh.Facts[FactInjectedWork], "none"))
	keys := slices.Sorted(maps.Keys(b.Mesh.Facts))
	for k := range a.Mesh.Facts {
		if _, ok := b.Mesh.Facts[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if k != FactInjectedWork {
			diff(k, cut(a.Mesh.Facts[k], 120), cut(b.Mesh.Facts[k], 120))
		}
	}
	pa, pb := a.Run.Provenance, b.Run.Provenance
	diff("meshbench", pa.MeshbenchVersion, pb.MeshbenchVersion)
	if pa.MeshbenchVersion == pb.MeshbenchVersion {
		diff("meshbench commit", pa.MeshbenchCommit, pb.MeshbenchCommit)
	}
	diff("Go", pa.GoVersion, pb.GoVersion)
	diff("kernel", pa.Platform.Kernel, pb.Platform.Kernel)
	diff("host", pa.Platform.Host, pb.Platform.Host)
	if a.Run.ID != b.Run.ID {
		out = append(out, fmt.Sprintf("run %s (%s) → %s (%s)", a.Run.ID, a.Run.Start.Format("2006-01-02 15:04"), b.Run.ID, b.Run.Start.Format("2006-01-02 15:04")))
	}
	if len(out) == 0 {
		out = append(out, "nothing the history records changed between them")
	}
	return out
}

// Describe says what a change point is, in one line.
func (a *Analysis) Describe(c ChangePoint) string {
	d := c.Diff
	size := fmt.Sprintf("%+.4g (%+.1f%%)", d.Delta.Median, d.Pct.Median)
	if d.Delta.Interval() {
		size += fmt.Sprintf(", 95%% interval [%+.4g, %+.4g]", d.Delta.Lo, d.Delta.Hi)
	} else {
		size += ", no interval (too few points on a side)"
	}
	p := a.Points[c.At]
	return fmt.Sprintf("from %s (run %s, mesh %s): %s, p = %.3f; %s", a.PointLabel(c.At), p.Run.ID, p.Mesh.Name, size, c.P, strings.Join(c.Provenance, "; "))
}
