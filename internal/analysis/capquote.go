package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
	"gonum.org/v1/gonum/stat/distuv"
)

// A capacity search runs in one deployment, and its interval (the
// parametric bootstrap of the search) counts that search's trial noise
// alone: a run on a fresh deployment finds a capacity off by what the
// deployments differ by, outside it (two quick runs minutes apart gave
// the baseline 5407 [5178, 5933] and 4722 [4575, 5702] req/s). So the
// capacity a report quotes carries that difference too, on a two-level
// random-effects model in logs: ln C = μ + δ + ε, δ the deployment's
// effect (the host's state and the placement, which a new deployment
// draws afresh), ε the search's error. The search's deployment is one
// draw of the run's deployments, and δ's spread is estimated by the
// scatter of the mesh's calibrated closed-loop capacity over them: each
// deployment measures it afresh, and its relative scatter stands for the
// capacity at the SLO's. It also holds the calibration's own noise (a
// short closed loop), which only widens the interval: the safe side.
// Everything is computed from study.json as stored, so past runs' reports
// get it too.

// Spread is a capacity's deployment-to-deployment scatter: the sample
// standard deviation of the log of the calibrated closed-loop capacities
// over the run's deployments (of two meshes' log ratio, for a ratio), on
// DF degrees of freedom, from N deployments' calibrations of the meshes
// From. Paired marks a ratio's scatter taken over the deployments that
// calibrated both meshes. DF 0 says there is nothing to add: the interval
// is within the one search, and Why says why.
type Spread struct {
	SD     float64
	DF     int
	N      int
	From   []string
	Paired bool
	Why    string
}

// Within reports whether the interval is the search's alone.
func (s Spread) Within() bool { return s.DF == 0 }

// calibrated are the calibrated capacities of each deployment that
// measured any, by mesh; results older than schema 17 ran one, at the
// provenance's scaling.
func calibrated(ix *results.Index) []map[string]float64 {
	if ix == nil {
		return nil
	}
	pv := ix.Provenance
	var out []map[string]float64
	for _, d := range pv.Deployments {
		if d.Scaling != nil && len(d.Scaling.Capacities) > 0 {
			out = append(out, d.Scaling.Capacities)
		}
	}
	if len(pv.Deployments) == 0 && pv.Scaling != nil && len(pv.Scaling.Capacities) > 0 {
		out = append(out, pv.Scaling.Capacities)
	}
	return out
}

// logSS is the sum of squares of xs' logs about their mean, with its
// degrees of freedom.
func logSS(xs []float64) (ss float64, df int) {
	if len(xs) < 2 {
		return 0, 0
	}
	var m float64
	for _, x := range xs {
		m += math.Log(x)
	}
	m /= float64(len(xs))
	for _, x := range xs {
		ss += (math.Log(x) - m) * (math.Log(x) - m)
	}
	return ss, len(xs) - 1
}

// withinWhy says why deployments give a capacity no spread.
func withinWhy(ix *results.Index) string {
	if ix != nil && len(ix.Provenance.Deployments) > 1 {
		return fmt.Sprintf("within one search: fewer than two of the run's %d deployments calibrated a capacity", len(ix.Provenance.Deployments))
	}
	return "within one search: the run had one deployment, so nothing says how another would differ"
}

// capacitySpread is a mesh's Spread: the scatter of its own calibrated
// capacities where two or more deployments measured it, else that of the
// meshes two or more did, pooled. A run calibrates every mesh in its
// first deployment and only the slowest, the reference its load is set
// from, in the others, so the reference's relative scatter then stands
// for every mesh's: the assumption is that a deployment moves every
// mesh's capacity by a like share.
func capacitySpread(deps []map[string]float64, mesh string) Spread {
	series := map[string][]float64{}
	for _, caps := range deps {
		for m, c := range caps {
			if c > 0 {
				series[m] = append(series[m], c)
			}
		}
	}
	from := []string{mesh}
	if len(series[mesh]) < 2 {
		from = nil
		for _, m := range slices.Sorted(maps.Keys(series)) {
			if len(series[m]) >= 2 {
				from = append(from, m)
			}
		}
	}
	var sp Spread
	var ss float64
	for _, m := range from {
		s, df := logSS(series[m])
		ss, sp.DF, sp.N = ss+s, sp.DF+df, max(sp.N, len(series[m]))
	}
	if sp.DF == 0 {
		return Spread{}
	}
	sp.SD, sp.From = math.Sqrt(ss/float64(sp.DF)), from
	return sp
}

// ratioSpread is the Spread of mesh a's capacity over b's: the scatter of
// their calibrated capacities' log ratio over the deployments that
// measured both, paired, where two or more did, since a deployment that
// slows both moves their ratio less than either. Else the two scatters
// add as though independent, which overstates the ratio's where a
// deployment moves both alike: the safe side.
func ratioSpread(deps []map[string]float64, a, b string) Spread {
	var rs []float64
	for _, caps := range deps {
		if caps[a] > 0 && caps[b] > 0 {
			rs = append(rs, caps[a]/caps[b])
		}
	}
	if ss, df := logSS(rs); df > 0 {
		return Spread{SD: math.Sqrt(ss / float64(df)), DF: df, N: len(rs), From: []string{a, b}, Paired: true}
	}
	sa, sb := capacitySpread(deps, a), capacitySpread(deps, b)
	if sa.Within() || sb.Within() {
		return Spread{}
	}
	from := append(slices.Clone(sa.From), sb.From...)
	slices.Sort(from)
	from = slices.Compact(from)
	return Spread{SD: math.Hypot(sa.SD, sb.SD), DF: min(sa.DF, sb.DF), N: max(sa.N, sb.N), From: from}
}

// zOf is the standard normal quantile of a two-sided level.
func zOf(level float64) float64 { return distuv.UnitNormal.Quantile(1 - (1-level)/2) }

// halfWidth is a log-scale half-width at Nominal: a search's standard
// error se, taken as known (its bootstrap's resamples are many), and the
// deployments' scatter on its degrees of freedom, added in squares, with
// Student's t at Welch and Satterthwaite's degrees of freedom for the
// sum: the spread's own where it dominates, growing to the normal's as
// the search's error does.
func halfWidth(se float64, sp Spread) float64 {
	v, s2 := se*se+sp.SD*sp.SD, sp.SD*sp.SD
	if sp.Within() || s2 == 0 {
		return zOf(Nominal) * se
	}
	nu := float64(sp.DF) * (v / s2) * (v / s2)
	q := zOf(Nominal)
	if nu < 1000 {
		q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(1 - (1-Nominal)/2)
	}
	return q * math.Sqrt(v)
}

// logSides are a search's standard errors of its log capacity below and
// above its estimate, each read off its side of the interval as a normal
// interval's at its level: the bootstrap's interval need not be
// symmetric, so each side keeps its own.
func logSides(e Estimate) (below, above float64) {
	if !e.Interval() || e.Lo <= 0 || e.Median <= 0 {
		return 0, 0
	}
	z := zOf(cmp.Or(e.Level, Nominal))
	return math.Log(e.Median/e.Lo) / z, math.Log(e.Hi/e.Median) / z
}

// SearchEstimate is the search's own capacity as study.json holds it, as
// an estimate over its trials: with its interval, a lower bound, or an
// older result's point.
func (c *CapacityMesh) SearchEstimate() Estimate {
	e := point(c.RPS, max(1, len(c.Trials)))
	switch c.Form() {
	case search.FormInterval:
		e.Lo, e.Hi, e.Level = c.CILow, c.CIHigh, cmp.Or(c.Level, Nominal)
	case search.FormBound:
		e.MedianBound = AtLeast
	}
	return e
}

// CapacityQuote is the capacity a report quotes for c, with what its
// interval spans: the search's estimate with the search's interval
// widened, side by side, by the deployments' scatter (halfWidth, at
// Nominal), or the search's bound lowered by t times the scatter (a bound
// holds no standard error, so the two margins add, not their squares: the
// safe side). With no scatter to add (one deployment, no calibration, or
// a connection ceiling, which calibrated rates say nothing of) it is the
// search's own. A capacity search that did not finish, or found no
// capacity, quotes nothing (Valid false).
func (d *Dataset) CapacityQuote(c *CapacityMesh) (Estimate, Spread) {
	e := c.SearchEstimate()
	if c.Status != results.StatusOK || c.RPS <= 0 {
		return Estimate{}, Spread{}
	}
	sp := d.spreadOf(c, "")
	if sp.Within() {
		return e, sp
	}
	switch {
	case e.MedianBound == AtLeast:
		e.Median *= math.Exp(-halfWidth(0, sp))
		e.Lo, e.Hi = e.Median, e.Median
	case e.Interval():
		below, above := logSides(e)
		e.Lo, e.Hi, e.Level = e.Median*math.Exp(-halfWidth(below, sp)), e.Median*math.Exp(halfWidth(above, sp)), Nominal
	}
	return e, sp
}

// CapacityRatio is mesh a's capacity over b's, from one run, with its
// interval at Nominal: in logs the two searches' errors (independent,
// each its own trials) and the deployments' scatter of the two meshes'
// ratio (ratioSpread) add as CapacityQuote's do. A bound over an estimate
// is at least the bound over the estimate's upper end, an estimate over a
// bound at most its upper end over the bound; two bounds say nothing (ok
// false), and an older result's point gives a point.
func (d *Dataset) CapacityRatio(a, b *CapacityMesh) (Estimate, Spread, bool) {
	ea, eb := a.SearchEstimate(), b.SearchEstimate()
	if a.Status != results.StatusOK || b.Status != results.StatusOK || a.RPS <= 0 || b.RPS <= 0 ||
		ea.MedianBound == AtLeast && eb.MedianBound == AtLeast {
		return Estimate{}, Spread{}, false
	}
	sp := d.spreadOf(a, b.Mesh)
	e := point(ea.Median/eb.Median, min(ea.N, eb.N))
	aLo, aHi := logSides(ea)
	bLo, bHi := logSides(eb)
	switch {
	case ea.MedianBound == AtLeast:
		e.MedianBound = AtLeast
		if eb.Interval() {
			e.Median *= math.Exp(-halfWidth(bHi, sp))
		}
	case eb.MedianBound == AtLeast:
		e.MedianBound = AtMost
		if ea.Interval() {
			e.Median *= math.Exp(halfWidth(aHi, sp))
		}
	case ea.Interval() && eb.Interval():
		e.Lo = e.Median * math.Exp(-halfWidth(math.Hypot(aLo, bHi), sp))
		e.Hi = e.Median * math.Exp(halfWidth(math.Hypot(aHi, bLo), sp))
		e.Level = Nominal
		return e, sp, true
	}
	e.Lo, e.Hi = e.Median, e.Median
	return e, sp, true
}

// spreadOf is the Spread of c's capacity (b empty) or of its ratio to
// mesh b's.
func (d *Dataset) spreadOf(c *CapacityMesh, b string) Spread {
	deps := calibrated(d.Index)
	if c.Over == results.OverConnections {
		return Spread{Why: "within one search: calibrated rates say nothing of how a connection ceiling scatters"}
	}
	sp := capacitySpread(deps, c.Mesh)
	if b != "" {
		sp = ratioSpread(deps, c.Mesh, b)
	}
	if sp.Within() {
		sp.Why = withinWhy(d.Index)
	}
	return sp
}
