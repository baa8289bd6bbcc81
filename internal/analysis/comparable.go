package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

// What the gate holds fixed between two runs: a difference in any of
// these, outside the variable under test, moves every figure and would
// be read as the meshes' own. A costlier release lowers a calibrated
// study's offered load for every mesh, and each mesh's CPU per request
// rises with it; a faster CPU, a different worker count or CPU limit,
// another Envoy build all move latency and cost. Each kind is named as
// `compare --vary` takes it.
const (
	VaryOfferedLoad = "offered-load"
	VaryScaling     = "scaling"
	VaryProxyBuild  = "proxy-build"
	VaryWorkers     = "workers"
	VaryCPUModel    = "cpu-model"
	VaryCPULimits   = "cpu-limits"
	// VaryArrivals: an open loop's arrival process, evenly spaced or
	// Poisson. At the same mean rate Poisson arrivals queue where even
	// ones do not, so every latency percentile moves with it.
	VaryArrivals = "arrivals"
)

// VaryKinds are the kinds, in the order they are checked.
var VaryKinds = []string{VaryOfferedLoad, VaryScaling, VaryProxyBuild, VaryWorkers, VaryCPUModel, VaryCPULimits, VaryArrivals}

// Offered load: two runs offer the same load when their median offered
// rates agree within OfferedSlack, or within OfferedTolerance while the
// two runs' units do not tell them apart (an exact rank test, two-sided,
// at OfferedAlpha). Calibration scatters a calibrated study's rate between
// deployments (about 4% on this project's host), which the intervals
// count; a shift the rank test sees, or one beyond the tolerance, is
// another load.
const (
	OfferedSlack     = 0.02
	OfferedTolerance = 0.10
	OfferedAlpha     = 0.01
)

// SetupDifference is one way B's set-up differs from A's that the gate
// cannot compare across.
type SetupDifference struct {
	Kind string // one of VaryKinds
	Text string
}

// IncomparableError refuses to gate two runs, naming each difference.
type IncomparableError struct {
	Differences []SetupDifference
	// Scale is A's scaling factor, for the fix an offered-load difference
	// names; 0 when A was not scaled.
	Scale float64
}

func (e *IncomparableError) Error() string {
	var parts []string
	kinds := map[string]bool{}
	for _, d := range e.Differences {
		parts = append(parts, d.Kind+": "+d.Text)
		kinds[d.Kind] = true
	}
	msg := "the runs differ outside the variable under test, so the gate cannot tell a regression from the difference: " + strings.Join(parts, "; ")
	if kinds[VaryOfferedLoad] && e.Scale > 0 {
		msg += fmt.Sprintf("; run B at A's load with 'meshbench run --scale %.4g'", e.Scale)
	}
	return msg + "; or name what you changed on purpose with --vary " + strings.Join(slices.Sorted(maps.Keys(kinds)), ",")
}

// CheckComparable returns an *IncomparableError when B's set-up differs
// from A's in any kind not in vary, nil when the runs can be gated.
func CheckComparable(a, b *Dataset, vary []string) error {
	var diffs []SetupDifference
	add := func(kind, format string, args ...any) {
		if !slices.Contains(vary, kind) {
			diffs = append(diffs, SetupDifference{Kind: kind, Text: fmt.Sprintf(format, args...)})
		}
	}
	pa, pb := a.Index.Provenance, b.Index.Provenance
	if x, y := pa.Platform.CPUModel, pb.Platform.CPUModel; x != "" && y != "" && x != y {
		add(VaryCPUModel, "CPU %q in A, %q in B", x, y)
	}
	if x, y := nodeCPUs(pa), nodeCPUs(pb); x != y {
		add(VaryCPUModel, "the nodes' CPUs are %s in A, %s in B", x, y)
	}
	if x, y := scalingClass(pa.Scaling), scalingClass(pb.Scaling); x != y {
		add(VaryScaling, "load %s in A, %s in B", x, y)
	} else if pa.Scaling != nil && pb.Scaling != nil && pa.Scaling.Mode == results.ScaleCalibrated && pb.Scaling.Mode == results.ScaleCalibrated && pa.Scaling.Fraction != pb.Scaling.Fraction {
		add(VaryScaling, "calibrated to %.0f%% of the slowest mesh's capacity in A, %.0f%% in B", 100*pa.Scaling.Fraction, 100*pb.Scaling.Fraction)
	}
	for _, m := range b.Meshes {
		if !slices.Contains(a.Meshes, m) {
			continue
		}
		if x, y := a.builds(m), b.builds(m); x != "" && y != "" && x != y {
			add(VaryProxyBuild, "%s ran Envoy %s in A, %s in B", m, x, y)
		}
		sa, oka := a.MeshSpec(m)
		sb, okb := b.MeshSpec(m)
		if !oka || !okb {
			continue
		}
		if sa.Workers != sb.Workers {
			add(VaryWorkers, "%s's proxies ran %s in A, %s in B", m, workersText(sa), workersText(sb))
		}
		if sa.ProxyCPU != sb.ProxyCPU || sa.NodeProxyCPU != sb.NodeProxyCPU {
			add(VaryCPULimits, "%s's proxy CPU %s in A, %s in B", m, cpuText(sa), cpuText(sb))
		}
		for _, c := range b.Configs {
			ga, gb := a.Group(m, c), b.Group(m, c)
			if ga == nil || gb == nil || len(ga.Reps) == 0 || len(gb.Reps) == 0 {
				continue
			}
			if x, y := ga.Reps[0].Alloc, gb.Reps[0].Alloc; limitsText(x) != limitsText(y) && sa.ProxyCPU == sb.ProxyCPU {
				add(VaryCPULimits, "%s at %s: CPU limits %s in A, %s in B", m, c.Label(), limitsText(x), limitsText(y))
			}
			if why := offeredApart(ga.Sample(Offered).Units(), gb.Sample(Offered).Units()); why != "" {
				add(VaryOfferedLoad, "%s at %s: %s", m, c.Label(), why)
			}
			if x, y := arrivalsOf(ga), arrivalsOf(gb); x != y {
				add(VaryArrivals, "%s at %s: %s in A, %s in B", m, c.Label(), x, y)
			}
			da, wa := phase(ga)
			db, wb := phase(gb)
			if apart(da, db) || apart(wa, wb) {
				add(VaryScaling, "%s at %s: measured phases of %.0f s after %.0f s of warm-up in A, %.0f s after %.0f s in B", m, c.Label(), da, wa, db, wb)
			}
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	e := &IncomparableError{Differences: dedupe(diffs)}
	if sc := pa.Scaling; sc != nil && sc.Factor > 0 && sc.Mode != results.ScaleNone {
		e.Scale = a.medianFactor()
	}
	return e
}

// offeredApart says how two runs' offered rates differ beyond the rule
// above; "" when they agree or either is a closed loop.
func offeredApart(ua, ub []float64) string {
	if len(ua) == 0 || len(ub) == 0 {
		return ""
	}
	ma, mb := Median(ua), Median(ub)
	rel := mb/ma - 1
	switch {
	case math.Abs(rel) <= OfferedSlack:
		return ""
	case math.Abs(rel) > OfferedTolerance:
		return fmt.Sprintf("offered %.1f req/s in A, %.1f in B (%+.1f%%, beyond %.0f%%)", ma, mb, 100*rel, 100*OfferedTolerance)
	}
	if p := 2 * min(HigherP(ua, ub), HigherP(ub, ua)); p < OfferedAlpha {
		return fmt.Sprintf("offered %.1f req/s in A, %.1f in B (%+.1f%%; the deployments' rates differ, two-sided p %.3g)", ma, mb, 100*rel, p)
	}
	return ""
}

// builds is the Envoy releases a mesh's usable repetitions ran, joined.
func (d *Dataset) builds(name string) string {
	seen := map[string]bool{}
	for _, c := range d.Configs {
		if g := d.Group(name, c); g != nil {
			for _, r := range g.Reps {
				if v := cmp.Or(mesh.EnvoyVersion(r.Summary.Verification), r.MeshSpec.ProxyVersion, d.Index.Provenance.Platform.EnvoyVersion); v != "" {
					seen[v] = true
				}
			}
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), "+")
}

// medianFactor is the median of the deployments' scaling factors.
func (d *Dataset) medianFactor() float64 {
	var fs []float64
	for _, dep := range d.Index.Provenance.Deployments {
		if dep.Scaling != nil && dep.Scaling.Factor > 0 {
			fs = append(fs, dep.Scaling.Factor)
		}
	}
	if len(fs) == 0 {
		return d.Index.Provenance.Scaling.Factor
	}
	return Median(fs)
}

func scalingClass(s *results.Scaling) string {
	switch {
	case s == nil || s.Mode == results.ScaleNone:
		return "as the study wrote it"
	case s.Mode == results.ScaleTenants:
		return "scaled by tenants"
	}
	return "scaled by a factor"
}

func nodeCPUs(p results.Provenance) string {
	var parts []string
	for _, n := range p.Cluster.Nodes {
		parts = append(parts, fmt.Sprintf("%s=%s", n.Name, cmp.Or(n.CPUs, "any")))
	}
	return strings.Join(parts, " ")
}

func workersText(s mesh.MeshSpec) string {
	if s.Workers == 0 {
		return "the default workers"
	}
	return fmt.Sprintf("%d workers", s.Workers)
}

func cpuText(s mesh.MeshSpec) string {
	return fmt.Sprintf("%s / node proxy %s", cmp.Or(s.ProxyCPU, "default"), cmp.Or(s.NodeProxyCPU, "default"))
}

func limitsText(a map[Part]Allocation) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(a)) {
		if p == PartDataPlane || p == PartDataPlaneAppNodes {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.3g", p, a[p].CPULimit))
	}
	return strings.Join(parts, ", ")
}

// phase is a group's measured phase and warm-up in seconds, medians over
// its repetitions.
func phase(g *Group) (duration, warmup float64) {
	var d, w []float64
	for _, r := range g.Reps {
		d = append(d, r.Load.Options.Duration.Seconds())
		w = append(w, r.Load.Options.Warmup.Seconds())
	}
	return Median(d), Median(w)
}

// arrivalsOf names the arrival processes a group's repetitions ran:
// "uniform arrivals", "Poisson arrivals", "a closed loop", or several
// joined; results before schema 19 ran uniform ones.
func arrivalsOf(g *Group) string {
	seen := map[string]bool{}
	for _, r := range g.Reps {
		a := r.Load.Options.ArrivalsOf()
		switch a {
		case "":
			a = "a closed loop"
		case load.ArrivalsPoisson:
			a = "Poisson arrivals"
		default:
			a += " arrivals"
		}
		seen[a] = true
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), " and ")
}

// PhaseTolerance is how far two runs' measured phases (or warm-ups) may
// differ, relatively: a calibrated study lengthens a phase to its minimum
// requests at the deployment's rate, a second or so either way.
const PhaseTolerance = 0.25

func apart(x, y float64) bool { return math.Abs(x-y) > PhaseTolerance*max(x, y) }

func dedupe(ds []SetupDifference) []SetupDifference {
	var out []SetupDifference
	for _, d := range ds {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
