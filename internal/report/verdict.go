package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
	"github.com/meshbench/meshbench/internal/results"
)

// banner says, above the verdict, what the platform emulates, which way
// the lab biases each mesh's figures, and which meshes the results do not
// hold: what changes a decision, and no more (Provenance and Configuration
// parity give the details).
func (b *builder) banner() []string {
	pv := b.d.Index.Provenance
	var out []string
	switch pv.Platform.Name {
	case infra.Lab:
		envoy := "upstream Envoy"
		if v := pv.Platform.EnvoyVersion; v != "" {
			envoy += " " + v
		}
		out = append(out, "Emulated, not Istio: "+envoy+" in Istio's roles on one host, with no istiod, xDS or certificate rotation (Provenance has the details).")
		if ms := b.istiodMeshes(); len(ms) > 0 {
			out = append(out, "Except the control plane of "+strings.Join(ms, ", ")+" (control_plane istiod): real istiod configured those sidecars over xDS through meshbench's relay, "+
				"and its CPU and memory are the control plane's figures (Configuration parity lists what it had to leave out).")
		}
		out = append(out, b.biases()...)
	case infra.Kubernetes:
		out = append(out, "Measured on Kubernetes: the meshes' own proxies and control planes, as their Helm charts installed them (versions under Provenance).")
	}
	var missing []string
	for _, p := range mesh.ProfileNames("") {
		pr, _ := mesh.LookupProfile(p)
		if pr.Mesh == "" || b.ranMesh(pr.Mesh) {
			continue
		}
		if !slices.Contains(missing, pr.Mesh) {
			missing = append(missing, pr.Mesh)
		}
	}
	if len(missing) > 0 {
		s := "Not measured here: " + strings.Join(missing, ", ") + "."
		if pv.Platform.Name == infra.Lab {
			s += " They run on the kubernetes platform only (docs/kubernetes.md)."
		}
		out = append(out, s)
	}
	return out
}

// biases says, per mesh the lab ran, which way the lab's stand-in moves
// its figures against the real mesh's. The two run in opposite
// directions, so the lab narrows the gap between sidecar and ambient.
func (b *builder) biases() []string {
	var sidecars, nodeProxies []string
	for _, m := range b.d.Meshes {
		p, ok := mesh.LookupProfile(meshProfile(b.d, m))
		switch {
		case !ok || p.Mesh != mesh.Istio:
		case p.Sidecars():
			sidecars = append(sidecars, m)
		case p.NodeProxies():
			nodeProxies = append(nodeProxies, m)
		}
	}
	var out []string
	if len(sidecars) > 0 {
		out = append(out, strings.Join(sidecars, ", ")+": understated. Its sidecars are upstream Envoy without Istio's filters (metadata exchange, istio.stats telemetry, istio_authn), "+
			"which real Istio sidecars run on every request: Istio's sidecar costs more than this.")
	}
	if len(nodeProxies) > 0 {
		out = append(out, strings.Join(nodeProxies, ", ")+": overstated. Its node proxy is an Envoy standing in for ztunnel, Istio's lighter Rust L4 proxy, "+
			"with an extra in-process hop (an internal listener per source pod) that ztunnel does not have: Istio ambient costs less than this.")
	}
	if len(sidecars) > 0 && len(nodeProxies) > 0 {
		out = append(out, "The two biases run in opposite directions, so the lab narrows the gap between sidecar and ambient (docs/studies.md compares it with the published one).")
	}
	return out
}

// ranMesh reports whether any cell or capacity search ran a profile of
// the named mesh (istio, linkerd, cilium).
func (b *builder) ranMesh(family string) bool {
	for _, m := range b.d.Meshes {
		if p, ok := mesh.LookupProfile(meshProfile(b.d, m)); ok && p.Mesh == family {
			return true
		}
	}
	return false
}

// Figure is one verdict figure as numbers: the estimate, its interval
// [Low, High] at Level (the interval's achieved confidence, 0.9688 for
// the [min, max] of six deployments), the unit and the N units it rests
// on. A figure without an interval has Low and High at Value and Level 0.
// Bound marks a figure that is a bound, not an estimate: BoundLower for a
// capacity search that stopped short (≥), BoundUpper for a ratio over
// such a capacity (≤); a latency censored by timeouts is BoundLower too
// (failed requests count at the timeout, so the figure is at least
// that), an added latency over a censored baseline's BoundUpper, and one
// censored on both sides BoundNone. LowBound and HighBound mark the
// interval's ends the same way. IntervalOver, for a capacity at the SLO
// and its ratio, says what the interval spans: "6 deployments" where the
// run's deployments' scatter widened the search's own, "one search" where
// it is the search's alone.
type Figure struct {
	Value     float64 `json:"value"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	Unit      string  `json:"unit"`
	N         int     `json:"n"`
	Level     float64 `json:"level"`
	Bound     string  `json:"bound,omitempty"`
	LowBound  string  `json:"low_bound,omitempty"`
	HighBound string  `json:"high_bound,omitempty"`
	// IntervalOver is set for capacities and their ratios only.
	IntervalOver string `json:"interval_over,omitempty"`
}

// Bounds of a Figure.
const (
	BoundLower = "lower"
	BoundUpper = "upper"
	// BoundNone: censored both ways, the number bounds the figure on
	// neither side.
	BoundNone = "none"
)

// figureBound is an analysis bound in a Figure's terms.
func figureBound(b analysis.Bound) string {
	switch b {
	case analysis.AtLeast:
		return BoundLower
	case analysis.AtMost:
		return BoundUpper
	case analysis.Unbounded:
		return BoundNone
	}
	return ""
}

// analysisBound is a Figure's bound back in the analysis' terms.
func analysisBound(b string) analysis.Bound {
	switch b {
	case BoundLower:
		return analysis.AtLeast
	case BoundUpper:
		return analysis.AtMost
	case BoundNone:
		return analysis.Unbounded
	}
	return analysis.Exact
}

// Loops of a verdict's cells.
const (
	LoopOpen   = "open"
	LoopClosed = "closed"
)

// Verdict is the verdict as data: computed once from the analysis, then
// drawn as the verdict's table and sentences and encoded as the
// document's "verdict", so that the two cannot disagree.
type Verdict struct {
	// Config is the load configuration the figures are at, and Load how
	// its cells ran; both empty for a study of capacity searches alone.
	Config string `json:"config,omitempty"`
	Load   string `json:"load,omitempty"`
	// Loop is the cells' loop, LoopOpen or LoopClosed. A closed loop's
	// latency is its connections over its throughput (Little's law), so
	// its verdict gives latency and throughput, never added latency.
	Loop string `json:"loop,omitempty"`
	// Reference is the mesh the others are measured against.
	Reference string `json:"reference"`
	// Throughput names what the meshes' throughput figure is.
	Throughput string `json:"throughput"`
	// PublishedCPUPerProxy is Istio's published CPU per proxy, which
	// CPUPerPass is set beside.
	PublishedCPUPerProxy PublishedFigure `json:"published_cpu_per_proxy"`
	// Ranking is one sentence per mesh, best first on the study's own
	// objective: added latency in an open loop, throughput in a closed
	// loop or a capacity search.
	Ranking []string      `json:"ranking"`
	Meshes  []VerdictMesh `json:"meshes"`
}

// PublishedFigure is a figure its authors published, with its source.
type PublishedFigure struct {
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
}

// VerdictMesh is one mesh's verdict figures; a figure the study did not
// measure is absent.
type VerdictMesh struct {
	Mesh    string `json:"mesh"`
	Profile string `json:"profile,omitempty"`
	// Reference marks the mesh the others are measured against.
	Reference bool `json:"reference,omitempty"`
	// Rank is the mesh's place in Ranking, from 1; 0 for a mesh the
	// objective cannot place.
	Rank     int    `json:"rank,omitempty"`
	Sentence string `json:"sentence"`
	// AddedP50, AddedP95 and AddedP99 are what the mesh adds to the
	// baseline's latency, paired by round (open loop only).
	AddedP50 *Figure `json:"added_p50_ms,omitempty"`
	AddedP95 *Figure `json:"added_p95_ms,omitempty"`
	AddedP99 *Figure `json:"added_p99_ms,omitempty"`
	// P50, P95 and P99 are the mesh's own latency (closed loop only).
	P50 *Figure `json:"p50_ms,omitempty"`
	P95 *Figure `json:"p95_ms,omitempty"`
	P99 *Figure `json:"p99_ms,omitempty"`
	// Throughput is Verdict.Throughput's figure, ThroughputRatio its
	// ratio to the reference's.
	Throughput      *Figure `json:"throughput,omitempty"`
	ThroughputRatio *Figure `json:"throughput_ratio,omitempty"`
	// DataPlaneCPU is the data plane's cores at the measured rate;
	// CPUPer1000 those cores per 1,000 completed req/s, idle included;
	// CPUPerPass that over the ProxyPasses one request makes.
	DataPlaneCPU *Figure  `json:"data_plane_cpu_cores,omitempty"`
	CPUPer1000   *Figure  `json:"data_plane_cpu_per_1000rps,omitempty"`
	CPUPerPass   *Figure  `json:"cpu_per_proxy_pass_per_1000rps,omitempty"`
	ProxyPasses  *float64 `json:"proxy_passes_per_request,omitempty"`
	// Proxies is the data plane's proxies in a deployment, MemoryPerProxy
	// its working set over them.
	Proxies        *Figure `json:"proxies,omitempty"`
	MemoryPerProxy *Figure `json:"memory_per_proxy_mib,omitempty"`
	// USDPerMillion is the glossary's "USD per million requests".
	USDPerMillion      *Figure `json:"usd_per_million_requests,omitempty"`
	ControlPlaneCPU    *Figure `json:"control_plane_cpu_cores,omitempty"`
	ControlPlaneMemory *Figure `json:"control_plane_memory_mib,omitempty"`

	// diffs are the added latencies' differences, for the sentence.
	diffs [3]*analysis.Diff
}

// newFigure is an estimate as a verdict figure, scaled into its unit; nil
// when it rests on nothing.
func newFigure(e analysis.Estimate, scale float64, unit string) *Figure {
	if !e.Valid() || !finite(e.Median) {
		return nil
	}
	v := e.Median * scale
	f := &Figure{Value: v, Low: v, High: v, Unit: unit, N: e.N, Bound: figureBound(e.MedianBound)}
	if e.Interval() && finite(e.Lo) && finite(e.Hi) {
		f.Low, f.High, f.Level = e.Lo*scale, e.Hi*scale, e.Level
		f.LowBound, f.HighBound = figureBound(e.LoBound), figureBound(e.HiBound)
	}
	return f
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// estimate is the figure back as an estimate, for the formatters.
func (f *Figure) estimate() analysis.Estimate {
	return analysis.Estimate{Median: f.Value, Lo: f.Low, Hi: f.High, N: f.N, Level: f.Level,
		MedianBound: analysisBound(f.Bound), LoBound: analysisBound(f.LowBound), HiBound: analysisBound(f.HighBound)}
}

// per is the figure divided by d, in another unit.
func (f *Figure) per(d float64, unit string) *Figure {
	if f == nil || d <= 0 {
		return nil
	}
	g := *f
	g.Value, g.Low, g.High, g.Unit = f.Value/d, f.Low/d, f.High/d, unit
	return &g
}

// text formats the figure as the table shows it: "value [low, high]" with
// the level where it is below 95%, a bound marked ≥ or ≤, a dash when
// absent.
func (f *Figure) text() string {
	switch {
	case f == nil:
		return "—"
	case f.Bound != "" && f.Level > 0:
		return est(f.estimate(), 1) // a censored figure with its interval
	case f.Bound == BoundLower:
		return "≥ " + num(f.Value)
	case f.Bound == BoundUpper:
		return "≤ " + num(f.Value)
	}
	return est(f.estimate(), 1)
}

// verdictModel computes the verdict's figures and sentences.
func (b *builder) verdictModel() (*Verdict, error) {
	d := b.d
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return nil, err
	}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return nil, err
	}
	kind := b.throughputKind()
	v := &Verdict{Reference: b.reference(), Throughput: kind.name, Ranking: []string{},
		PublishedCPUPerProxy: PublishedFigure{Value: istioProxyCPUPer1000, Unit: "vCPU per 1,000 req/s per proxy", Source: istioProxyCPUSource}}
	var rep analysis.LoadConfig
	if len(d.Configs) > 0 {
		rep = d.Representative()
		v.Config, v.Load, v.Loop = rep.Label(), loadText(b.firstGroup(rep)), LoopOpen
		if closedLoop(b.firstGroup(rep)) {
			v.Loop = LoopClosed
		}
	}
	cpPart := analysis.RolePart(metrics.RoleControlPlane)
	for _, m := range d.Meshes {
		vm := VerdictMesh{Mesh: m, Profile: meshProfile(d, m), Reference: m == v.Reference}
		g := b.groupAt(m, rep)
		if g != nil {
			b.latencyFigures(&vm, g, rep, v.Loop)
		}
		if g != nil && d.HasPart(m, analysis.PartDataPlane) {
			cpu, _, _, million := perRequestCosts(g, prices)
			vm.DataPlaneCPU = newFigure(g.Estimate(analysis.CPU(analysis.PartDataPlane)), 1, "cores")
			vm.CPUPer1000 = newFigure(cpu, 1, "cores per 1,000 req/s")
			vm.USDPerMillion = newFigure(million, 1, "USD per million requests")
			proxies, memory := proxyCounts(g)
			vm.Proxies = newFigure(proxies, 1, "proxies")
			vm.MemoryPerProxy = newFigure(memory, 1.0/(1<<20), "MiB per proxy")
		} else if c := b.capacityOf(m); c != nil {
			if x, lo, hi, level, ok := b.capacityDataPlaneCPUAt(c); ok {
				vm.CPUPer1000 = &Figure{Value: x, Low: x, High: x, Unit: "cores per 1,000 req/s", N: max(1, len(c.Trials))}
				if level > 0 {
					vm.CPUPer1000.Low, vm.CPUPer1000.High, vm.CPUPer1000.Level = lo, hi, level
				}
			}
		}
		if passes, _ := b.proxyPasses(m, g); passes > 0 && vm.CPUPer1000 != nil {
			vm.ProxyPasses = &passes
			vm.CPUPerPass = vm.CPUPer1000.per(passes, "cores per 1,000 req/s per proxy pass")
		}
		if g != nil && d.HasPart(m, cpPart) {
			vm.ControlPlaneCPU = newFigure(g.Estimate(analysis.CPU(cpPart)), 1, "cores")
			vm.ControlPlaneMemory = newFigure(g.Estimate(analysis.Memory(cpPart)), 1.0/(1<<20), "MiB")
		}
		vm.Throughput, vm.ThroughputRatio = b.throughputFigures(m, v.Reference, rep, v.Loop)
		v.Meshes = append(v.Meshes, vm)
	}
	b.rank(v)
	return v, nil
}

// closedLoop says whether a group's cells ran a closed loop: no rate
// offered, each connection sending when the last answer came.
func closedLoop(g *analysis.Group) bool { return g != nil && g.ClosedLoop() }

// latencyFigures are an open loop's added latencies against the baseline
// and a closed loop's own latencies. With no baseline mesh there is
// nothing to add latency to, and the baseline adds nothing to itself.
func (b *builder) latencyFigures(vm *VerdictMesh, g *analysis.Group, rep analysis.LoadConfig, loop string) {
	d := b.d
	pms := []analysis.Metric{analysis.P50, analysis.P95, analysis.P99}
	if loop == LoopClosed {
		vm.P50, vm.P95, vm.P99 = newFigure(g.Estimate(pms[0]), 1, "ms"), newFigure(g.Estimate(pms[1]), 1, "ms"), newFigure(g.Estimate(pms[2]), 1, "ms")
		return
	}
	if d.Baseline == "" || vm.Mesh == d.Baseline {
		return
	}
	added := []**Figure{&vm.AddedP50, &vm.AddedP95, &vm.AddedP99}
	for i, pm := range pms {
		if o, ok := d.Overhead(vm.Mesh, rep, pm); ok && o.Delta.Valid() {
			*added[i] = newFigure(o.Delta, 1, "ms")
			vm.diffs[i] = &o
		}
	}
}

// proxyCounts are the data plane's proxies in a repetition and its
// working set over them (bytes per proxy), medians over the units: a
// proxy holds its memory whatever the rate, so memory is per proxy, not
// per request.
func proxyCounts(g *analysis.Group) (proxies, perProxy analysis.Estimate) {
	var n, mem []float64
	var reps []*analysis.Rep
	for _, r := range g.Reps {
		c := r.Alloc[analysis.PartDataPlane].Components
		bytes, ok := r.Values[analysis.Memory(analysis.PartDataPlane)]
		if !ok || c <= 0 {
			continue
		}
		n, mem, reps = append(n, float64(c)), append(mem, bytes/float64(c)), append(reps, r)
	}
	median := func(xs []float64) analysis.Estimate { return analysis.MedianCI(analysis.RepSample(reps, xs).Units()) }
	return median(n), median(mem)
}

// proxyPasses is how many data-plane proxy passes one request makes under
// a mesh: the workload graph's calls per request times the profile's
// proxies per call, less the caller's side of the entry call where the
// load enters through the ingress gateway (not a data-plane proxy). 0
// when the results keep no graph or the profile passes no proxy; why
// says how it was counted.
func (b *builder) proxyPasses(m string, g *analysis.Group) (passes float64, why string) {
	p, ok := mesh.LookupProfile(meshProfile(b.d, m))
	if !ok || b.calls <= 0 {
		return 0, ""
	}
	per, which := p.ProxiesPerCall()
	if per == 0 {
		return 0, ""
	}
	passes = b.calls * float64(per)
	why = fmt.Sprintf("%s calls × %d (%s)", num(b.calls), per, which)
	if g != nil && len(g.Reps) > 0 && g.Reps[0].Load.Path == string(infra.PathIngress) {
		passes--
		why += ", less the load generator's side of the entry call, which enters through the ingress gateway"
	}
	return passes, why
}

// throughputFigures is a mesh's throughput figure and its ratio to the
// reference's: the capacity at the SLO where the study searched, else the
// closed loop's completed rate, else calibration's closed-loop capacity.
func (b *builder) throughputFigures(m, ref string, rep analysis.LoadConfig, loop string) (fig, ratio *Figure) {
	d := b.d
	switch {
	case len(d.Capacity) > 0:
		c := b.capacityOf(m)
		if c == nil || c.Status != results.StatusOK || c.RPS <= 0 {
			return nil, nil
		}
		unit := "req/s"
		if connectionCeiling(d.Capacity) {
			unit = "connections"
		}
		fig = b.capacityFigure(c, unit)
		rc := b.capacityOf(ref)
		if rc == nil || rc == c {
			return fig, nil
		}
		// A bound over an estimate is a lower bound of the ratio, an
		// estimate over a bound an upper one; two bounds give none.
		if r, sp, ok := d.CapacityRatio(c, rc); ok {
			if ratio = newFigure(r, 1, "×"); ratio != nil {
				ratio.IntervalOver = overText(sp)
			}
		}
		return fig, ratio
	case loop == LoopClosed:
		g := b.groupAt(m, rep)
		if g == nil {
			return nil, nil
		}
		fig = newFigure(g.Estimate(analysis.QPS), 1, "req/s")
		if ref == d.Baseline && m != ref {
			if o, ok := d.Overhead(m, rep, analysis.QPS); ok && o.Pct.Valid() {
				ratio = newFigure(o.Ratio(), 1, "×")
			}
		}
		return fig, ratio
	}
	sc := d.Index.Provenance.Scaling
	if sc == nil {
		return nil, nil
	}
	x, ok := sc.Capacities[m]
	if !ok {
		return nil, nil
	}
	fig = &Figure{Value: x, Low: x, High: x, Unit: "req/s", N: 1}
	if r, ok := sc.Capacities[ref]; ok && r > 0 && m != ref {
		ratio = &Figure{Value: x / r, Low: x / r, High: x / r, Unit: "×", N: 1}
	}
	return fig, ratio
}

// capacityFigure is the capacity the report quotes for a search (its
// estimate with its interval over the run's deployments, or its bound:
// analysis.CapacityQuote) as a figure, over its trials (one search at
// least, where the results list none).
func (b *builder) capacityFigure(c *analysis.CapacityMesh, unit string) *Figure {
	e, sp := b.d.CapacityQuote(c)
	f := newFigure(e, 1, unit)
	if f != nil {
		f.IntervalOver = overText(sp)
	}
	return f
}

// capacitySpanNote says what the verdict's capacity intervals span, and
// what their ratios' do.
func (b *builder) capacitySpanNote() string {
	var sp, ratio analysis.Spread
	var seen bool
	var borrowed []string
	var from []string
	for _, c := range b.d.Capacity {
		e, q := b.d.CapacityQuote(c)
		if !e.Valid() {
			continue
		}
		if !seen {
			sp, seen = q, true
		}
		if !q.Within() && !slices.Contains(q.From, c.Mesh) {
			borrowed, from = append(borrowed, c.Mesh), q.From
		}
		if rc := b.capacityOf(b.reference()); rc != nil && rc != c {
			if _, r, ok := b.d.CapacityRatio(c, rc); ok && !r.Within() {
				ratio = r
			}
		}
	}
	switch {
	case !seen:
		return ""
	case sp.Within():
		return "Each interval is " + sp.Why + " (see Capacity at the SLO); a ratio to " + b.reference() + "'s combines the two searches' intervals."
	}
	s := fmt.Sprintf("Each interval spans the run's %d deployments: the search ran in one of them, and its own interval (Capacity at the SLO gives it) is widened by the scatter of the mesh's calibrated closed-loop capacity over them", sp.N)
	if len(borrowed) > 0 {
		s += fmt.Sprintf(" (for %s, which only the first deployment calibrated, %s's)", strings.Join(borrowed, " and "), strings.Join(from, " and "))
	}
	s += ", in logs, with Student's t on the deployments' degrees of freedom (docs/statistics.md). A ratio to " + b.reference() + "'s combines the two searches' intervals and the deployments' scatter of the two capacities' ratio"
	switch {
	case ratio.Paired:
		s += ", paired by deployment."
	case !ratio.Within():
		s += ": no two deployments calibrated both meshes, so their two scatters add as though independent, which overstates the ratio's where a deployment moves both alike."
	default:
		s += "."
	}
	return s
}

// overText is what a capacity's interval spans, for Figure.IntervalOver.
func overText(sp analysis.Spread) string {
	if sp.Within() {
		return "one search"
	}
	return fmt.Sprintf("%d deployments", sp.N)
}

// rank orders the meshes on the study's objective and writes each one's
// sentence: in an open loop by added p50, lowest first, with each mesh's
// data-plane CPU as a share of the costliest's; in a closed loop, or a
// study of capacity searches alone, by throughput, highest first.
func (b *builder) rank(v *Verdict) {
	byLatency := v.Loop == LoopOpen && b.d.Baseline != ""
	var order []*VerdictMesh
	for i := range v.Meshes {
		vm := &v.Meshes[i]
		switch {
		case byLatency && !vm.Reference && vm.AddedP50 != nil:
			order = append(order, vm)
		case !byLatency && vm.Throughput != nil:
			order = append(order, vm)
		}
	}
	slices.SortStableFunc(order, func(x, y *VerdictMesh) int {
		if byLatency {
			return cmp.Compare(x.AddedP50.Value, y.AddedP50.Value)
		}
		return cmp.Compare(y.Throughput.Value, x.Throughput.Value)
	})
	costliest := ""
	for _, vm := range order {
		if vm.CPUPer1000 != nil && (costliest == "" || vm.CPUPer1000.Value > b.meshOf(v, costliest).CPUPer1000.Value) {
			costliest = vm.Mesh
		}
	}
	for i, vm := range order {
		vm.Rank = i + 1
		var s string
		if byLatency {
			s = vm.Mesh + " " + addedPhrase(vm)
		} else {
			s = b.throughputPhrase(v, vm)
		}
		if top := b.meshOf(v, costliest); top != nil && vm.Mesh != costliest && vm.CPUPer1000 != nil && top.CPUPer1000.Value > 0 {
			s += fmt.Sprintf(" and costs %s%% of %s's data-plane CPU", num(100*vm.CPUPer1000.Value/top.CPUPer1000.Value), costliest)
		}
		if byLatency && vm.ThroughputRatio != nil && v.Throughput != "" {
			s += "; sustains " + timesText(vm.ThroughputRatio) + " " + v.Reference + "'s " + v.Throughput
		}
		vm.Sentence = s + "."
		v.Ranking = append(v.Ranking, vm.Sentence)
	}
	for i := range v.Meshes {
		vm := &v.Meshes[i]
		switch {
		case vm.Sentence != "":
		case vm.Reference:
			vm.Sentence = "the reference the others are measured against."
		case b.d.Baseline == "" && len(b.releaseVerdicts()) > 0:
			vm.Sentence = "against " + v.Reference + " in the proxy releases line above."
		default:
			vm.Sentence = "not enough data for a verdict."
		}
	}
}

func (b *builder) meshOf(v *Verdict, m string) *VerdictMesh {
	for i := range v.Meshes {
		if v.Meshes[i].Mesh == m {
			return &v.Meshes[i]
		}
	}
	return nil
}

// addedPhrase says what a mesh adds at p50, as its interval allows.
func addedPhrase(vm *VerdictMesh) string {
	d := vm.diffs[0]
	if d == nil {
		return "has no added p50"
	}
	switch analysis.Judge(*d) {
	case analysis.Higher:
		return "adds " + num(d.Delta.Median) + " ms at p50"
	case analysis.Lower:
		return "is " + num(-d.Delta.Median) + " ms faster at p50"
	case analysis.NoDifference:
		return "adds no measurable latency at p50 (" + signed(d.Delta.Median) + " ms, its interval across zero)"
	case analysis.Censored:
		return "adds no measurable latency at p50 (" + bounded(signed(d.Delta.Median), d.Delta.MedianBound) + " ms, censored by timeouts)"
	}
	return "has too few runs to tell its p50 (" + signed(d.Delta.Median) + " ms)"
}

// throughputPhrase says what a mesh sustains or completes, with its
// ratio to the reference's and, in a closed loop, its p50.
func (b *builder) throughputPhrase(v *Verdict, vm *VerdictMesh) string {
	s := vm.Mesh
	if vm.Reference {
		s += ", the reference,"
	}
	t := vm.Throughput
	switch {
	case len(b.d.Capacity) > 0:
		s += " sustains " + t.text() + " " + t.Unit + " at " + strings.TrimPrefix(v.Throughput, "capacity at ")
	case v.Loop == LoopClosed:
		s += " completes " + num(t.Value) + " req/s"
		if g := b.firstGroup(b.d.Representative()); g != nil {
			s += fmt.Sprintf(" over %d connections", g.Reps[0].Load.Options.Connections)
		}
		if vm.P50 != nil {
			s += " at a p50 of " + num(vm.P50.Value) + " ms"
		}
	default:
		s += " completes " + num(t.Value) + " req/s in calibration's closed loop"
	}
	if r := vm.ThroughputRatio; r != nil {
		s += " (" + timesText(r) + " " + v.Reference + "'s)"
	}
	return s
}

// timesText is a ratio with its bound, and its interval where it has one:
// "0.117×", "≤ 0.117×".
func timesText(r *Figure) string {
	if r.Bound == "" && !r.estimate().Interval() {
		return num(r.Value) + "×"
	}
	return r.text() + "×"
}

// verdict is the report's first section: the verdict's table, per mesh,
// drawn from the model, with its notes and the cost chart. The ranking
// sentences are the document's, above the banner.
func (b *builder) verdict(v *Verdict, err error) Section {
	s := Section{ID: "verdict", Title: "Verdict"}
	if err != nil {
		s.Blocks = append(s.Blocks, text("No verdict: "+err.Error()))
		return s
	}
	// A study of one profile under two proxy releases (the regression
	// preset) is answered by the newer release against the older, which
	// the table, per mesh against a baseline, does not hold.
	for _, r := range b.releaseVerdicts() {
		line := "Proxy releases, " + r.text
		if r.config != "" {
			line = "Proxy releases at " + r.config + ", " + r.text
		}
		s.Blocks = append(s.Blocks, text(line+" Proxy releases below gives each figure under both releases."))
	}
	s.Blocks = append(s.Blocks, table(b.verdictTable(v)))
	if ch := b.costChart(v); ch != nil {
		s.Blocks = append(s.Blocks, chartBlock(ch))
	}
	return s
}

// verdictTable draws the model's figures, one row per mesh, in as few
// columns as a first screen holds; the caveats are the banner's, once.
func (b *builder) verdictTable(v *Verdict) *Table {
	haveCells := v.Loop != ""
	kind := b.throughputKind()
	t := &Table{Header: []string{"Mesh"}}
	if haveCells {
		if v.Loop == LoopClosed {
			t.Header = append(t.Header, "p50 (ms)", "p95 / p99 (ms)")
		} else {
			t.Header = append(t.Header, "Added p50 (ms)", "Added p95 / p99 (ms)")
		}
	}
	t.Header = append(t.Header, cmp.Or(kind.header, "Throughput (req/s)"))
	if haveCells {
		t.Header = append(t.Header, "Data-plane CPU (cores)")
	}
	t.Header = append(t.Header, fmt.Sprintf("CPU per proxy pass (cores per 1,000 req/s; Istio publishes %.2f)", v.PublishedCPUPerProxy.Value))
	if haveCells {
		t.Header = append(t.Header, "Memory per proxy (MiB)", "USD per million requests")
	}
	withCP := slices.ContainsFunc(v.Meshes, func(vm VerdictMesh) bool { return vm.ControlPlaneCPU != nil })
	if withCP {
		t.Header = append(t.Header, "Control plane CPU (cores)", "Control plane memory (MiB)")
	}
	inverted := false
	for _, vm := range v.Meshes {
		row := []string{vm.Mesh}
		if haveCells {
			p50, p95, p99 := vm.P50, vm.P95, vm.P99
			signedText := false
			if v.Loop == LoopOpen {
				p50, p95, p99, signedText = vm.AddedP50, vm.AddedP95, vm.AddedP99, true
			}
			tail, inv := p99Order(p95, p99)
			inverted = inverted || inv
			row = append(row, latencyText(p50, signedText), latencyText(p95, signedText)+" / "+latencyText(p99, signedText)+tail)
			if p95 == nil && p99 == nil {
				row[len(row)-1] = "—"
			}
		}
		tp := vm.Throughput.text()
		if vm.Throughput != nil && vm.Throughput.N == 1 && !vm.Throughput.estimate().Interval() && len(b.d.Capacity) == 0 && v.Loop != LoopClosed {
			tp = num(vm.Throughput.Value) + " (closed loop, 1 measurement)"
		} else if vm.Throughput != nil && vm.Throughput.Bound == BoundLower {
			tp += " (a lower bound)"
		}
		if r := vm.ThroughputRatio; r != nil {
			tp += " (" + timesText(r) + " " + v.Reference + ")"
		}
		row = append(row, tp)
		if haveCells {
			row = append(row, vm.DataPlaneCPU.text())
		}
		pass := vm.CPUPerPass.text()
		if vm.CPUPerPass != nil {
			pass += " over " + num(*vm.ProxyPasses) + " passes"
		}
		row = append(row, pass)
		if haveCells {
			row = append(row, vm.MemoryPerProxy.text(), usdFigure(vm.USDPerMillion))
		}
		if withCP {
			row = append(row, vm.ControlPlaneCPU.text(), vm.ControlPlaneMemory.text())
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = b.verdictNotes(v, kind, withCP, inverted)
	if slices.ContainsFunc(v.Meshes, func(vm VerdictMesh) bool {
		return slices.ContainsFunc([]*Figure{vm.AddedP50, vm.AddedP95, vm.AddedP99, vm.P50, vm.P95, vm.P99}, censoredFigure)
	}) {
		t.Notes = append(t.Notes, censoredNote)
	}
	return t
}

// censoredFigure reports whether a latency figure is censored by
// timeouts: a bound at its value or an end.
func censoredFigure(f *Figure) bool {
	return f != nil && (f.Bound != "" || f.LowBound != "" || f.HighBound != "")
}

// latencyText is a latency figure, signed where it is an added one.
func latencyText(f *Figure, signedText bool) string {
	switch {
	case f == nil:
		return "—"
	case signedText:
		return addedText(f.estimate())
	}
	return f.text()
}

// p99Order says, after a p95 / p99 pair, when the p99 is below the p95:
// within their intervals, which is noise; or in this sample, which the
// note explains.
func p99Order(p95, p99 *Figure) (tail string, sample bool) {
	if p95 == nil || p99 == nil || p99.Value >= p95.Value {
		return "", false
	}
	if p99.High >= p95.Low && p95.Level > 0 && p99.Level > 0 {
		return "; p99 < p95 within their intervals", false
	}
	return "; p99 < p95 in this sample (see below)", true
}

// usdFigure formats a price per million requests.
func usdFigure(f *Figure) string {
	if f == nil {
		return "—"
	}
	return usdEst(f.estimate(), usd)
}

// verdictNotes say what the figures are, once.
func (b *builder) verdictNotes(v *Verdict, kind throughputKind, withCP, inverted bool) []string {
	d := b.d
	var notes []string
	if v.Loop != "" {
		notes = append(notes, fmt.Sprintf("At %s: %s. %s", v.Config, v.Load, intervalNote))
		switch {
		case v.Loop == LoopClosed:
			notes = append(notes, "A closed loop's latency is its connections over its throughput (Little's law): a mesh that completes fewer requests a second over the same connections shows the same loss again as latency, "+
				"so the verdict gives each mesh's latency and throughput, not its latency added to the baseline's.")
		case d.Baseline == "":
			notes = append(notes, "This study runs no baseline mesh, so no latency is added to anything: the dashes. A dash is also a figure this study did not measure.")
		default:
			notes = append(notes, "Added latency is the mesh's latency less the baseline's in the same rounds (the Hodges-Lehmann estimate over the units, with Wilcoxon's signed-rank interval); "+
				"an interval across zero is no measurable difference. A dash is the baseline itself or a figure this study did not measure.")
		}
		if inverted {
			notes = append(notes, "A p99 below its p95 is no faster tail: each is the median over the units of that percentile's own figure (or difference), and medians taken apart need not keep the percentiles' order.")
		}
	}
	var passes []string
	for _, vm := range v.Meshes {
		if n, why := b.proxyPasses(vm.Mesh, b.groupAt(vm.Mesh, b.repOrZero())); n > 0 {
			passes = append(passes, fmt.Sprintf("%s %s (%s)", vm.Mesh, num(n), why))
		}
	}
	cpu := "CPU per proxy pass is the data plane's (sidecars, node proxies, waypoints) mean cores divided by the completed thousands of requests a second and by the proxy passes one request makes"
	if len(b.d.Configs) == 0 {
		cpu = "CPU per proxy pass is the data plane's cores at the capacity, from the lines fitted over the trials (Capacity at the SLO), divided by the thousands of requests a second and by the proxy passes one request makes"
	}
	if len(passes) > 0 {
		cpu += fmt.Sprintf(" (the %s graph's calls per request, the load generator's included, times the proxies one call passes): %s", b.graphName, strings.Join(passes, "; "))
	} else {
		cpu += "; these results keep no workload graph (" + results.GraphFile + "), so the passes and the figure are not known"
	}
	notes = append(notes, cpu+fmt.Sprintf(". It includes idle CPU, which a low rate makes large. Beside it, %s.", v.PublishedCPUPerProxy.Source))
	if v.Loop != "" {
		notes = append(notes, "Memory per proxy is the data plane's mean working set over its proxies in a deployment: a proxy holds its memory whatever the rate. "+
			"USD per million requests is defined in the glossary.")
	}
	if withCP {
		notes = append(notes, "Control plane CPU and memory are its mean usage over the measured window (on the lab, istiod under control_plane istiod), apart from the data plane's; Cost prices it.")
	}
	if v.Loop == "" {
		notes = append(notes, "A capacity search runs no cells at a fixed rate, so there are no latencies, memory or dollars here; Capacity at the SLO gives the capacity's CPU and what it costs.")
	}
	return append(notes, kind.note)
}

// repOrZero is the representative configuration, or none for a study of
// capacity searches alone.
func (b *builder) repOrZero() analysis.LoadConfig {
	if len(b.d.Configs) == 0 {
		return analysis.LoadConfig{}
	}
	return b.d.Representative()
}

// costChart sets the meshes' data-plane CPU per proxy pass, memory per
// proxy and dollars per million requests side by side, each as a share of
// the costliest mesh's figure, so that three units fit one axis; the
// verdict table has the figures themselves.
func (b *builder) costChart(v *Verdict) *Chart {
	cats := []string{"CPU per proxy pass", "memory per proxy", "USD per million requests"}
	figs := func(vm VerdictMesh) [3]*Figure { return [3]*Figure{vm.CPUPerPass, vm.MemoryPerProxy, vm.USDPerMillion} }
	var top [3]float64
	some := false
	for _, vm := range v.Meshes {
		for i, f := range figs(vm) {
			if f != nil {
				top[i], some = max(top[i], f.Value), true
			}
		}
	}
	if !some || v.Loop == "" {
		return nil
	}
	var series []chart.BarSeries
	for _, vm := range v.Meshes {
		fs := figs(vm)
		if fs == [3]*Figure{} {
			continue
		}
		bs := chart.BarSeries{Name: vm.Mesh, Colour: b.colour[vm.Mesh]}
		for i, f := range fs {
			if f == nil || top[i] <= 0 {
				bs.Bars = append(bs.Bars, chart.Bar{V: nan})
				continue
			}
			bs.Bars = append(bs.Bars, chart.Bar{V: 100 * f.Value / top[i], Lo: 100 * f.Low / top[i], Hi: 100 * f.High / top[i]})
		}
		series = append(series, bs)
	}
	title := "Data plane's CPU, memory and dollars, by mesh"
	return &Chart{File: "verdict-costs", Title: title,
		Caption: "Each figure as a percentage of the costliest mesh's, whiskers its interval; the verdict table above gives the figures in their units.",
		SVG:     chart.Bars{Title: title, X: "figure", Y: chart.Axis{Label: "% of the costliest mesh"}, Categories: cats, Series: series}.SVG()}
}

// throughputKind is what the verdict's throughput column holds: capacity
// at the SLO where the study searched for it, else the closed loop's
// completed rate, else the closed-loop capacity calibration measured, else
// nothing.
type throughputKind struct {
	header string // the column's
	name   string // in the verdict's sentences and JSON
	note   string
}

func (b *builder) throughputKind() throughputKind {
	if connectionCeiling(b.d.Capacity) {
		slo := b.d.Capacity[0].SLO
		return throughputKind{header: "Connection ceiling (connections)", name: "concurrent-connection ceiling at " + slo.String(),
			note: fmt.Sprintf("The connection ceiling is the most connections each mesh held open, each sending slow requests, while meeting the SLO (%s), found by search, "+
				"with its interval (see Concurrent-connection ceiling at the SLO); it is a count of connections, not a rate.", slo)}
	}
	if len(b.d.Capacity) > 0 {
		return throughputKind{name: "capacity at " + b.d.Capacity[0].SLO.String(),
			note: strings.TrimSpace(fmt.Sprintf("Throughput is the capacity at the SLO (%s): the highest open-loop rate each mesh sustained while meeting it, found by search: "+
				"an estimate from a complete search with its 95%% interval, or, marked ≥, a bound from a search cut short. %s", b.d.Capacity[0].SLO, b.capacitySpanNote()))}
	}
	if len(b.d.Configs) > 0 && closedLoop(b.firstGroup(b.d.Representative())) {
		return throughputKind{name: "closed-loop throughput",
			note: fmt.Sprintf("Throughput is the requests a second the closed loop's connections completed in the cells, with its interval, and its ratio to %s's paired by round.", b.reference())}
	}
	if sc := b.d.Index.Provenance.Scaling; sc != nil && len(sc.Capacities) > 0 {
		return throughputKind{name: "closed-loop capacity (calibration)",
			note: "Throughput is calibration's closed-loop capacity: one short measurement per mesh before the cells, as many requests as the connections " +
				"could complete, with no latency limit, so it has no interval and is not a capacity at an SLO. It says how the meshes rank, not what they sustain " +
				"at an acceptable latency; run a capacity study for that."}
	}
	return throughputKind{note: "Throughput: this study measured none (no capacity search, no calibration). The requests a second the cells completed are the offered load, not a throughput; see Latency and throughput per load configuration."}
}

func (b *builder) capacityOf(mesh string) *analysis.CapacityMesh {
	for _, c := range b.d.Capacity {
		if c.Mesh == mesh {
			return c
		}
	}
	return nil
}

// perRequestCosts are the data plane's cores and MiB per 1,000 completed
// req/s, medians over the units with their intervals, and its monthly
// price and price per million requests (the glossary's, the one place
// the report prices a request), means over the
// deployments (a bill is paid on mean use) with MeanCI's calibrated Student's t intervals.
func perRequestCosts(g *analysis.Group, p cost.UnitPrices) (cpu, mem, month, million analysis.Estimate) {
	var c, m, mo, mi []float64
	var reps []*analysis.Rep
	for _, r := range g.Reps {
		rate := r.Values[analysis.QPS]
		cores, ok := r.Values[analysis.CPU(analysis.PartDataPlane)]
		if !ok || rate <= 0 {
			continue
		}
		bytes := r.Values[analysis.Memory(analysis.PartDataPlane)]
		gb := bytes / (1 << 30)
		c = append(c, cores/rate*1000)
		m = append(m, bytes/(1<<20)/rate*1000)
		mo = append(mo, cores*p.PerVCPUMonth+gb*p.PerGBMonth)
		mi = append(mi, p.PerMillionRequests(cores, gb, rate))
		reps = append(reps, r)
	}
	median := func(xs []float64) analysis.Estimate { return analysis.MedianCI(analysis.RepSample(reps, xs).Units()) }
	mean := func(xs []float64) analysis.Estimate { return analysis.MeanCI(analysis.RepSample(reps, xs).MeanUnits()) }
	return median(c), median(m), mean(mo), mean(mi)
}

// usdPerMillionTerm is the glossary's entry for it.
const usdPerMillionTerm = "what the data plane (sidecars, node proxies, waypoints) costs per million requests at the rate it carried: its mean cores and memory priced at the cost model's unit prices per vCPU-month and GB-month " +
	"(Cost names them), over the requests it carried; the mean over the deployments, with its calibrated Student's t interval (docs/statistics.md), at the verdict's load configuration. It is the report's one price per request: a capacity search's trials price none."

// capacityDataPlaneCPUAt is a capacity search's data-plane cores per
// 1,000 req/s at the capacity, from the fitted lines, and, where the
// quoted capacity has an interval (over the deployments, where the run
// had several: analysis.CapacityQuote), at its ends, at its level.
func (b *builder) capacityDataPlaneCPUAt(c *analysis.CapacityMesh) (v, lo, hi, level float64, ok bool) {
	if c.Status != results.StatusOK || c.RPS <= 0 {
		return 0, 0, 0, 0, false
	}
	at := func(rate float64) (float64, bool) {
		var sum float64
		var any bool
		for _, f := range c.Fits {
			if f.Role.DataPlane() {
				sum, any = sum+f.At(rate), true
			}
		}
		return sum / rate * 1000, any
	}
	v, ok = at(c.RPS)
	if !ok {
		return 0, 0, 0, 0, false
	}
	e, _ := b.d.CapacityQuote(c)
	if !e.Interval() || e.Lo <= 0 {
		return v, 0, 0, 0, true
	}
	a, _ := at(e.Lo)
	z, _ := at(e.Hi)
	return v, min(a, z), max(a, z), e.Level, true
}

// addedText is a difference in ms with its interval.
func addedText(e analysis.Estimate) string {
	if !e.Interval() {
		return bounded(signed(e.Median), e.MedianBound) + " (too few runs)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", bounded(signed(e.Median), e.MedianBound), bounded(signed(e.Lo), e.LoBound), bounded(signed(e.Hi), e.HiBound), levelText(e))
}

// usdEst formats a price estimate with its interval.
func usdEst(e analysis.Estimate, f func(float64) string) string {
	switch {
	case !e.Valid() || math.IsNaN(e.Median):
		return "—"
	case !e.Interval():
		return f(e.Median) + " (1 run)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", f(e.Median), f(e.Lo), f(e.Hi), levelText(e))
}

// reference is the mesh the verdict's ratios are against: the baseline,
// else the first mesh whose profile is the baseline's, else the first.
func (b *builder) reference() string {
	if b.d.Baseline != "" {
		return b.d.Baseline
	}
	for _, m := range b.d.Meshes {
		if meshProfile(b.d, m) == mesh.ProfileBaseline {
			return m
		}
	}
	if len(b.d.Meshes) > 0 {
		return b.d.Meshes[0]
	}
	return ""
}
