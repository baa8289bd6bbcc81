package analysis

import (
	"math"

	"github.com/meshbench/meshbench/internal/mesh"
)

// Parity compares, at one load configuration, a lab mesh whose proxies
// istiod configured (control_plane istiod) with its twin that meshbench
// configured: how far the lab's own configuration is from Istio's. Each
// figure is a ratio, istiod's over meshbench's, with its 95% bootstrap
// interval; N is zero where a side lacks the figure.
type Parity struct {
	Profile   string
	Meshbench string // the twin's mesh name
	Istiod    string
	// CPUPerRequest is the data plane's CPU per completed request.
	CPUPerRequest Estimate
	// MemoryPerProxy is the data plane's mean working set over its
	// proxies.
	MemoryPerProxy Estimate
	// AddedP50 and AddedP99 are the latency each adds over the baseline;
	// zero N without a baseline.
	AddedP50, AddedP99 Estimate
	// P50 is istiod's p50 minus meshbench's, in milliseconds: the
	// difference of their added latencies, without a ratio's division.
	P50 Diff
}

// MeshSpec is the spec a mesh's usable repetitions ran, the first one
// found; false when the mesh has none.
func (d *Dataset) MeshSpec(name string) (mesh.MeshSpec, bool) {
	for _, c := range d.Configs {
		if g := d.Group(name, c); g != nil && len(g.Reps) > 0 {
			return g.Reps[0].MeshSpec, true
		}
	}
	return mesh.MeshSpec{}, false
}

// twin is the spec istiod's mesh would have under meshbench's
// configuration.
func twin(s mesh.MeshSpec) mesh.MeshSpec {
	s.ControlPlane = ""
	return s
}

// Parities pairs each mesh istiod configured with the first mesh whose
// spec is the same but for meshbench configuring it, and compares them
// at a configuration; meshes without a twin are left out.
func (d *Dataset) Parities(c LoadConfig) []Parity {
	specs := map[string]mesh.MeshSpec{}
	for _, m := range d.Meshes {
		if s, ok := d.MeshSpec(m); ok {
			specs[m] = s
		}
	}
	var out []Parity
	for _, m := range d.Meshes {
		s, ok := specs[m]
		if !ok || s.ControlPlane != mesh.ControlPlaneIstiod {
			continue
		}
		for _, ref := range d.Meshes {
			rs, ok := specs[ref]
			if !ok || rs.ControlPlane == mesh.ControlPlaneIstiod || twin(rs) != twin(s) {
				continue
			}
			if p, ok := d.parity(c, ref, m); ok {
				p.Profile = s.Profile
				out = append(out, p)
			}
			break
		}
	}
	return out
}

func (d *Dataset) parity(c LoadConfig, ref, other string) (Parity, bool) {
	rg, og := d.Group(ref, c), d.Group(other, c)
	if rg == nil || og == nil {
		return Parity{}, false
	}
	p := Parity{Meshbench: ref, Istiod: other,
		CPUPerRequest:  Difference(rg.Values(CPUPerRequest), og.Values(CPUPerRequest)).Ratio(),
		MemoryPerProxy: Difference(memoryPerProxy(rg), memoryPerProxy(og)).Ratio(),
		P50:            Difference(rg.Values(P50), og.Values(P50)),
	}
	if bg := d.Group(d.Baseline, c); d.Baseline != "" && bg != nil {
		p.AddedP50 = AddedRatio(bg.Values(P50), rg.Values(P50), og.Values(P50))
		p.AddedP99 = AddedRatio(bg.Values(P99), rg.Values(P99), og.Values(P99))
	}
	return p, true
}

// memoryPerProxy is each usable repetition's data-plane working set over
// the proxies measured in it.
func memoryPerProxy(g *Group) []float64 {
	var out []float64
	for _, r := range g.Reps {
		v, ok := r.Values[Memory(PartDataPlane)]
		if n := r.Alloc[PartDataPlane].Components; ok && n > 0 {
			out = append(out, v/float64(n))
		}
	}
	return out
}

// Ratio is the difference read as Other over Base: the bootstrap's
// percentages, each plus 100, as a factor.
func (d Diff) Ratio() Estimate {
	f := func(pct float64) float64 { return 1 + pct/100 }
	return Estimate{Median: f(d.Pct.Median), Lo: f(d.Pct.Lo), Hi: f(d.Pct.Hi), N: d.Pct.N}
}

// AddedRatio is what other adds over base divided by what ref adds over
// base, medians of repetitions each, with a percentile-bootstrap 95%
// interval resampling the three sides independently, as Difference does
// two. With fewer than MinRunsForDifference repetitions on a side there
// is no interval (N is 1); a resample whose ref adds nothing is skipped.
func AddedRatio(base, ref, other []float64) Estimate {
	n := min(len(base), len(ref), len(other))
	if n == 0 {
		return Estimate{}
	}
	ratio := func(b, r, o float64) float64 {
		if r == b {
			return math.NaN()
		}
		return (o - b) / (r - b)
	}
	e := Estimate{Median: ratio(Median(base), Median(ref), Median(other)), N: n}
	e.Lo, e.Hi = e.Median, e.Median
	if n < MinRunsForDifference {
		e.N = 1
		return e
	}
	rng := newRNG()
	stats := make([]float64, Resamples)
	bb, rb, ob := make([]float64, len(base)), make([]float64, len(ref)), make([]float64, len(other))
	for i := range stats {
		stats[i] = ratio(resampleMedian(rng, base, bb), resampleMedian(rng, ref, rb), resampleMedian(rng, other, ob))
	}
	e.Lo, e.Hi = percentileInterval(stats)
	return e
}
