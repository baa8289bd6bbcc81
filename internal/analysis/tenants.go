package analysis

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
)

// LinearityTolerance is how far the per-tenant figures at the two
// measured tenant counts may disagree before an extrapolation is flagged.
const LinearityTolerance = 0.10

// Extrapolation is one additive figure of one mesh, measured at two
// loaded-tenant counts and extrapolated to the study's.
type Extrapolation struct {
	Mesh   string
	Config LoadConfig // the other parameters, without the tenant count
	Figure string     // what is added up, as the report labels it
	Unit   string
	// K1 and K2 are the two tenant counts, At1 and At2 the figure there;
	// N is the study's tenant count and AtN the line through both at N.
	K1, K2, N     int
	At1, At2, AtN float64
}

// Disagreement is how far the per-tenant figures at the two counts
// differ, relative to the first's: 0 when the figure is proportional to
// the tenants loaded.
func (e Extrapolation) Disagreement() float64 {
	p1, p2 := e.At1/float64(e.K1), e.At2/float64(e.K2)
	if p1 == 0 {
		if p2 == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(p2-p1) / p1
}

// Fixed reports whether the figure did not change with the tenants: a
// shared component (a node proxy, the ingress gateway), extrapolated flat.
func (e Extrapolation) Fixed() bool { return e.At1 == e.At2 }

// Linear reports whether the figure scaled with the tenants, within
// LinearityTolerance, or stayed fixed.
func (e Extrapolation) Linear() bool { return e.Fixed() || e.Disagreement() <= LinearityTolerance }

// extrapolatedParts are the parts whose figures add up over tenants.
var extrapolatedParts = []Part{
	Part(metrics.RoleApp), Part(metrics.RoleSidecar), Part(metrics.RoleNodeProxy), Part(metrics.RoleWaypoint),
	PartDataPlane, Part(metrics.RoleControlPlane), Part(metrics.RoleIngress),
}

// Extrapolations extrapolates a tenant-scaled run's additive figures
// (each part's CPU and memory, its component count and its requested
// CPU and memory) to the study's tenant count: along the line through
// the figures at the two smallest measured counts, with the per-tenant
// figures at both compared (Linear). Latency is never extrapolated. Nil
// when the run was not tenant-scaled.
func (d *Dataset) Extrapolations() []Extrapolation {
	sc := d.Index.Provenance.Scaling
	if sc == nil || len(sc.Tenants) < 2 || sc.StudyTenants == 0 {
		return nil
	}
	ks := slices.Sorted(slices.Values(sc.Tenants))
	k1, k2, n := ks[0], ks[1], sc.StudyTenants
	var out []Extrapolation
	for _, slice := range d.Slices(results.TenantsParam) {
		at := func(k int) LoadConfig {
			p := maps.Clone(slice.Params)
			if p == nil {
				p = map[string]string{}
			}
			p[results.TenantsParam] = strconv.Itoa(k)
			return newConfig(p)
		}
		for _, mesh := range d.Meshes {
			g1, g2 := d.Group(mesh, at(k1)), d.Group(mesh, at(k2))
			if g1 == nil || g2 == nil || len(g1.Reps) == 0 || len(g2.Reps) == 0 {
				continue
			}
			add := func(figure, unit string, v1, v2 float64) {
				e := Extrapolation{Mesh: mesh, Config: slice, Figure: figure, Unit: unit, K1: k1, K2: k2, N: n, At1: v1, At2: v2}
				e.AtN = v1 + (v2-v1)/float64(k2-k1)*float64(n-k1)
				out = append(out, e)
			}
			for _, p := range extrapolatedParts {
				e1, e2 := g1.Estimate(CPU(p)), g2.Estimate(CPU(p))
				if !e1.Valid() || !e2.Valid() {
					continue
				}
				m1, m2 := g1.Estimate(Memory(p)), g2.Estimate(Memory(p))
				a1, a2 := g1.Reps[0].Alloc[p], g2.Reps[0].Alloc[p]
				add(p.Label()+" CPU", "cores", e1.Median, e2.Median)
				add(p.Label()+" memory", "MiB", m1.Median/(1<<20), m2.Median/(1<<20))
				add(p.Label()+" containers", "", float64(a1.Components), float64(a2.Components))
				if a1.CPURequest > 0 || a2.CPURequest > 0 {
					add(p.Label()+" CPU requested", "cores", a1.CPURequest, a2.CPURequest)
				}
				if a1.MemRequest > 0 || a2.MemRequest > 0 {
					add(p.Label()+" memory requested", "MiB", a1.MemRequest/(1<<20), a2.MemRequest/(1<<20))
				}
			}
		}
	}
	return out
}
