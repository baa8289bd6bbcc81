package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/versions"
)

// The regression gate: what makes a new result set (a new proxy release,
// a new mesh version) a regression against an old one, with a known
// false-alarm rate.
//
// The gate judges a declared primary family of figures, by default each
// mesh's added p50, added p99 and data-plane CPU per app CPU at the
// study's main configuration (at a closed loop, which has no added
// latency, each mesh's throughput in place of the added figures); every
// other figure is reported and never gates. Each figure in the family
// gets the one-sided p-value of an exact rank test that B is worse
// (Mann-Whitney on the two runs' units, or Wilcoxon's signed-rank on the
// paired units of two meshes of one run), and Holm's step-down procedure
// over the family holds the chance of any false alarm, when nothing
// changed, at GateAlpha. A figure Holm rejects is a regression when B is
// worse by at least RegressionMinPct percent: a difference too small to
// act on never fails a build.

// ErrRegression is returned, wrapped, by a gate that found a regression:
// a comparison with --fail-on-regression, or a history's check.
var ErrRegression = errors.New("regression")

// GateAlpha is the family-wise false-alarm rate the gate holds: the
// chance that comparing a run with another of the same commit fails at
// all, whatever the family's size.
const GateAlpha = 0.05

// RegressionMinPct is the smallest change, in percent of the old figure
// (the estimate, not a bound), that the gate counts as a regression.
const RegressionMinPct = 5.0

// AddedPrefix names an overhead in a gate's family: "added:p50" is the
// mesh's p50 less its run's baseline's, round by round.
const AddedPrefix = "added:"

// RegressionMetrics are the figures the gate's default family holds:
// p50 and p99 latency, as overheads where the run has a baseline, and
// the data plane's CPU per request.
var RegressionMetrics = []Metric{P50, P99, CPUPerRequest}

// DefaultGate is the default family, in Change.Name's terms. Its CPU
// figure is the data plane's CPU per app CPU, the CPU per request in
// units of the app's own (see CPUPerAppCPU), not CPU per request: two
// runs minutes apart on one VM differ in what the same work costs, by
// more than a run's deployments scatter, and the gate's rank test counts
// only that scatter. On ten real quick runs of one commit (45 pairs,
// docs/statistics.md) CPU per request raised 6 false alarms, CPU per app
// CPU 2, and it caught a +0.3 ms, +20% sidecar regression in 40 pairs of
// 40 where CPU per request caught 37.
var DefaultGate = []string{AddedPrefix + string(P50), AddedPrefix + string(P99), string(CPUPerAppCPU)}

// GateSpec is a gate's primary family: the figures (Change.Name, such as
// "added:p50" or "p99") of every mesh at one configuration.
type GateSpec struct {
	Figures []string
	// Config is the configuration's key (LoadConfig.Key); empty is the
	// main one, B's representative configuration.
	Config string
}

// ParseGateFigures reads a comma-separated family ("added:p50,p99") and
// names the first figure the gate cannot judge.
func ParseGateFigures(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		m := Metric(strings.TrimPrefix(f, AddedPrefix))
		if strings.HasPrefix(f, AddedPrefix) && !m.IsLatency() {
			return nil, fmt.Errorf("gate figure %q: only a latency has an overhead (added:p50, added:p99, ...)", f)
		}
		if !slices.Contains(gateable, m) && !m.IsCPU() && !m.IsMemory() {
			return nil, fmt.Errorf("gate figure %q is not a figure compare measures; use metrics such as p50, p99, %s, qps, or added:p50", f, CPUPerRequest)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("the gate's family is empty: name at least one figure, such as added:p50")
	}
	return out, nil
}

var gateable = []Metric{P50, P90, P95, P99, P999, MeanLatency, QPS, ErrorPct, CPUPerRequest, CPUPerAppCPU, Gbps}

// GateResult is the gate's decision over its family.
type GateResult struct {
	Family      int // figures in the family
	Regressions []Change
	// Reachable says the smallest p-value the family's units can give
	// passes Holm's first threshold (GateAlpha over the family's size):
	// with fewer units the gate cannot fail whatever happened, and the
	// comparison says so.
	Reachable bool
	// SmallestP is that smallest attainable p-value.
	SmallestP float64
}

// Gate marks the comparison's family, decides it (see the package
// comment above) and returns the decision. Without a baseline in either
// run, an added figure falls back to the figure itself. At a closed-loop
// configuration, which has no added latency (see Compare), the family's
// added figures are replaced by the throughput (QPS, higher is better) of
// each mesh that would have had them: in a closed loop a mesh's cost
// shows as requests a second lost over the same connections.
func (c *Comparison) Gate(spec GateSpec) GateResult {
	cfg := spec.Config
	if cfg == "" && len(c.B.Configs) > 0 {
		cfg = c.B.Representative().Key
	}
	noBaseline := c.A.Baseline == "" || c.B.Baseline == ""
	closed := false
	for _, lc := range c.B.Configs {
		if lc.Key == cfg {
			closed = c.A.ClosedLoopAt(lc) || c.B.ClosedLoopAt(lc)
		}
	}
	added := slices.ContainsFunc(spec.Figures, func(f string) bool { return strings.HasPrefix(f, AddedPrefix) })
	in := func(ch Change) bool {
		if ch.Config.Key != cfg {
			return false
		}
		name := ch.Name()
		switch {
		case slices.Contains(spec.Figures, name):
			return true
		case closed:
			return added && ch.Metric == QPS && (noBaseline || ch.Mesh != c.B.Baseline)
		case noBaseline && !ch.Added:
			return slices.Contains(spec.Figures, AddedPrefix+name)
		}
		return false
	}
	units := func(ch Change) (int, int) { return ch.Diff.Base.N, ch.Diff.Other.N }
	return gate(c.Changes, in, func(ch Change) float64 {
		m, n := units(ch)
		if m < 1 || n < 1 {
			return 1
		}
		return 1 / math.Exp(lchoose(m+n, m))
	})
}

// gate applies Holm's procedure to the changes in the family; smallest
// gives the smallest p-value a change's design can reach.
func gate(changes []Change, in func(Change) bool, smallest func(Change) float64) GateResult {
	var idx []int
	var ps []float64
	r := GateResult{SmallestP: 1}
	for i := range changes {
		changes[i].Gated, changes[i].Regression, changes[i].P = false, false, 0
		if !in(changes[i]) {
			continue
		}
		changes[i].Gated = true
		changes[i].P = changes[i].worseP()
		idx = append(idx, i)
		ps = append(ps, changes[i].P)
		r.SmallestP = min(r.SmallestP, smallest(changes[i]))
	}
	r.Family = len(idx)
	if r.Family == 0 {
		return r
	}
	r.Reachable = r.SmallestP <= GateAlpha/float64(r.Family)
	for k, rejected := range Holm(ps, GateAlpha) {
		ch := &changes[idx[k]]
		if rejected && ch.Regressed() && ch.Diff.Pct.Valid() && math.Abs(ch.Diff.Pct.Median) >= RegressionMinPct {
			ch.Regression = true
			r.Regressions = append(r.Regressions, *ch)
		}
	}
	return r
}

// Holm is Holm's step-down procedure ("A simple sequentially rejective
// multiple test procedure", 1979): with the p-values sorted, reject while
// the i-th smallest is at most alpha/(m-i+1). It holds the chance of
// rejecting any true hypothesis at alpha, whatever their dependence.
// Which p-values it rejects, in their order.
func Holm(ps []float64, alpha float64) []bool {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	out := make([]bool, len(ps))
	for k, i := range order {
		if ps[i] > alpha/float64(len(ps)-k) {
			break
		}
		out[i] = true
	}
	return out
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// CompareMeshes compares two meshes of one result set (such as one mesh
// under two proxy releases, interleaved in the same rounds) at each load
// configuration, on the metrics, paired by round (Paired): each Change is
// newer minus older, named by the newer mesh. The changes come back
// gated: the family is every change returned, with Wilcoxon's
// signed-rank p-values, under Holm.
func CompareMeshes(d *Dataset, older, newer string, ms []Metric) ([]Change, GateResult) {
	var out []Change
	for _, cfg := range d.Configs {
		gOld, gNew := d.Group(older, cfg), d.Group(newer, cfg)
		if gOld == nil || gNew == nil {
			continue
		}
		for _, m := range ms {
			so, sn := gOld.Sample(m), gNew.Sample(m)
			if len(so) == 0 || len(sn) == 0 {
				continue
			}
			out = append(out, Change{Mesh: newer, Config: cfg, Metric: m, Diff: Paired(so, sn)})
		}
	}
	r := gate(out, func(Change) bool { return true }, func(ch Change) float64 { return math.Pow(0.5, float64(ch.Diff.Delta.N)) })
	return out, r
}

// ReleasePair is two meshes of one result set that differ only in the
// proxy release they ran, such as one profile under two Envoy releases.
type ReleasePair struct {
	Older, Newer               string // mesh names
	OlderRelease, NewerRelease string
	Profile                    string // both meshes' profile
}

// ReleasePairs finds the meshes that share every setting but the proxy
// release, and pairs each with the one of the next release: one pair for
// two releases (the regression preset), a release after release reading
// for a series of them (envoy-releases), rather than every pair. Pairs
// are older first, grouped by setting in the order the meshes are listed.
// A mesh's release is what its cells' verification recorded, else its
// proxy_version; one that ran more than one release (a default Envoy
// replaced mid-study), or a release another mesh of its settings ran too,
// is in no pair.
func (d *Dataset) ReleasePairs() []ReleasePair {
	type meshRelease struct {
		name, release string
	}
	var specs []mesh.MeshSpec
	bySpec := map[mesh.MeshSpec][]meshRelease{}
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
		spec.ProxyVersion = ""
		if _, ok := bySpec[spec]; !ok {
			specs = append(specs, spec)
		}
		for v := range releases {
			bySpec[spec] = append(bySpec[spec], meshRelease{name: name, release: v})
		}
	}
	var out []ReleasePair
	for _, spec := range specs {
		ms := bySpec[spec]
		slices.SortStableFunc(ms, func(a, b meshRelease) int { return versions.CompareReleases(a.release, b.release) })
		for i := 1; i < len(ms); i++ {
			a, b := ms[i-1], ms[i]
			if a.release == b.release || (i+1 < len(ms) && ms[i+1].release == b.release) || (i >= 2 && ms[i-2].release == a.release) {
				continue // two meshes of one release: which is the release's is not known
			}
			out = append(out, ReleasePair{Older: a.name, Newer: b.name, OlderRelease: a.release, NewerRelease: b.release, Profile: spec.Profile})
		}
	}
	return out
}
