package analysis

import (
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
		CPUPerRequest:  Paired(rg.Sample(CPUPerRequest), og.Sample(CPUPerRequest)).Ratio(),
		MemoryPerProxy: Paired(memoryPerProxy(rg), memoryPerProxy(og)).Ratio(),
		P50:            Paired(rg.Sample(P50), og.Sample(P50)),
	}
	if bg := d.Group(d.Baseline, c); d.Baseline != "" && bg != nil {
		p.AddedP50 = AddedRatio(bg.Sample(P50), rg.Sample(P50), og.Sample(P50))
		p.AddedP99 = AddedRatio(bg.Sample(P99), rg.Sample(P99), og.Sample(P99))
	}
	return p, true
}

// memoryPerProxy is each usable repetition's data-plane working set over
// the proxies measured in it.
func memoryPerProxy(g *Group) Sample {
	var out Sample
	for _, r := range g.Reps {
		v, ok := r.Values[Memory(PartDataPlane)]
		if n := r.Alloc[PartDataPlane].Components; ok && n > 0 {
			out = append(out, Obs{Deployment: r.Summary.DeploymentOf(), Round: r.Summary.Repetition, V: v / float64(n)})
		}
	}
	return out
}

// Ratio is the difference read as Other over Base: its percentages, each
// plus 100, as a factor.
func (d Diff) Ratio() Estimate {
	f := func(pct float64) float64 { return 1 + pct/100 }
	return Estimate{Median: f(d.Pct.Median), Lo: f(d.Pct.Lo), Hi: f(d.Pct.Hi), N: d.Pct.N, Level: d.Pct.Level}
}

// AddedRatio is what other adds over base divided by what ref adds over
// base, the three measured in the same rounds: each round's ratio, each
// deployment's median of those (see Sample.Units), and their median with
// its distribution-free interval (MedianCI). A round whose ref adds
// nothing has no ratio and is left out.
func AddedRatio(base, ref, other Sample) Estimate {
	return MedianCI(AddedRatioUnits(base, ref, other))
}

// AddedRatioUnits are AddedRatio's independent units: per deployment, the
// median of its rounds' (other - base)/(ref - base).
func AddedRatioUnits(base, ref, other Sample) []float64 {
	b, r := map[int]float64{}, map[int]float64{}
	for _, o := range base {
		b[o.Round] = o.V
	}
	for _, o := range ref {
		r[o.Round] = o.V
	}
	var ratios Sample
	for _, o := range other {
		bv, okb := b[o.Round]
		rv, okr := r[o.Round]
		if !okb || !okr || rv == bv {
			continue
		}
		ratios = append(ratios, Obs{Deployment: o.Deployment, Round: o.Round, V: (o.V - bv) / (rv - bv)})
	}
	return ratios.Units()
}
