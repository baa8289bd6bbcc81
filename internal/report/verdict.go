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

// banner says, above the verdict, what the platform emulates and which
// meshes the results do not hold, so that no figure is read as something
// it is not.
func (b *builder) banner() []string {
	pv := b.d.Index.Provenance
	var out []string
	switch pv.Platform.Name {
	case infra.Lab:
		envoy := "upstream Envoy"
		if v := pv.Platform.EnvoyVersion; v != "" {
			envoy += " " + v
		}
		out = append(out, "Emulated, not Istio: this lab runs "+envoy+" configured in Istio's roles on one host "+
			"(a sidecar Envoy per pod for sidecar profiles; one Envoy per node standing in for ztunnel, Istio ambient's Rust node proxy, for ambient profiles; "+
			"an Envoy waypoint where a profile has one). Istio's own Envoy filters are absent (metadata exchange, istio.stats telemetry, istio_authn, the ALPN override), "+
			"and so are istiod, istio-agent and istio-cni: there is no control plane, no xDS and no certificate rotation. "+
			"Real Istio proxies do more work per request than these; read the figures as the cost of the data path, not of an Istio release.")
		if ms := b.istiodMeshes(); len(ms) > 0 {
			out = append(out, "Except the control plane of "+strings.Join(ms, ", ")+" (control_plane istiod): real istiod configured those sidecars over xDS, "+
				"through meshbench's relay, which removed or marked optional the Istio-only extensions upstream Envoy cannot load (Configuration parity lists them); "+
				"istiod ran in the lab's accounting, and its CPU and memory are the control plane's figures. Certificates still came from meshbench's CA, with no istio-agent or rotation.")
		}
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
			s += " The lab runs Istio's profiles only; Linkerd and Cilium run on the kubernetes platform (docs/kubernetes.md)."
		}
		out = append(out, s)
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

// verdict is the report's first table: per mesh, what it adds to latency,
// the throughput it sustains, what its data plane costs per 1,000 req/s
// and in dollars, and a one-line verdict with its caveat.
func (b *builder) verdict() Section {
	s := Section{ID: "verdict", Title: "Verdict"}
	d := b.d
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return Section{ID: s.ID, Title: s.Title, Blocks: []Block{text("No verdict: " + err.Error())}}
	}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return Section{ID: s.ID, Title: s.Title, Blocks: []Block{text("No verdict: " + err.Error())}}
	}
	var rep analysis.LoadConfig
	haveCells := len(d.Configs) > 0
	if haveCells {
		rep = d.Representative()
	}
	kind := b.throughputKind()
	t := &Table{Header: []string{"Mesh", "Added p50 (ms)", "Added p95 (ms)", "Added p99 (ms)",
		cmp.Or(kind.header, "Throughput (req/s)"), "vs " + b.reference(),
		"Data-plane CPU (cores per 1,000 req/s)", "Data-plane memory (MiB per 1,000 req/s)",
		"Data plane (USD per month)", "USD per million requests", "Verdict"}}
	// A control plane measured in the cells (istiod on the lab, the
	// mesh's own on Kubernetes) gets its own columns, apart from the data
	// plane's: it follows configuration, not traffic.
	cpPart := analysis.RolePart(metrics.RoleControlPlane)
	withCP := haveCells && len(b.meshesWith(cpPart)) > 0
	if withCP {
		n := len(t.Header)
		t.Header = append(t.Header[:n-1:n-1], "Control plane CPU (cores)", "Control plane memory (MiB)", t.Header[n-1])
	}
	costs := map[string][3]analysis.Estimate{}
	for _, m := range d.Meshes {
		row := []string{m, "—", "—", "—", "—", "—", "—", "—", "—", "—", ""}
		var g *analysis.Group
		if haveCells {
			g = d.Group(m, rep)
		}
		var overheads []analysis.Diff
		// With no baseline mesh there is nothing to add latency to: the
		// columns keep their dash (not measured), not "too few requests".
		if g != nil && d.Baseline != "" && m != d.Baseline {
			for i, pm := range []analysis.Metric{analysis.P50, analysis.P95, analysis.P99} {
				o, ok := d.Overhead(m, rep, pm)
				if !ok || !o.Delta.Valid() {
					row[1+i] = "n/a (too few requests)"
					continue
				}
				row[1+i] = addedText(o.Delta)
				overheads = append(overheads, o)
			}
		}
		tp, ratio := b.throughput(m)
		row[4], row[5] = tp, ratio
		if g != nil && len(g.Reps) > 0 && d.HasPart(m, analysis.PartDataPlane) {
			cpu, mem, month, million := perRequestCosts(g, prices)
			row[6], row[7], row[8], row[9] = est(cpu, 1), est(mem, 1), usdEst(month, dollars), usdEst(million, usd)
			costs[m] = [3]analysis.Estimate{cpu, mem, million}
		} else if c := b.capacityOf(m); c != nil {
			if cpu, ok := capacityDataPlaneCPU(c); ok {
				row[6] = cpu
			}
		}
		row[10] = b.verdictLine(m, overheads, kind)
		if withCP {
			cpu, mem := "—", "—"
			if g != nil && d.HasPart(m, cpPart) {
				cpu, mem = est(g.Estimate(analysis.CPU(cpPart)), 1), est(g.Estimate(analysis.Memory(cpPart)), 1.0/(1<<20))
			}
			row = append(row[:10], cpu, mem, row[10])
		}
		t.Rows = append(t.Rows, row)
	}
	var notes []string
	if haveCells {
		notes = append(notes, fmt.Sprintf("Latency, CPU, memory and dollars at %s: %s. %s", rep.Label(), loadText(b.firstGroup(rep)), intervalNote))
		if d.Baseline == "" {
			notes = append(notes, "This study runs no baseline mesh, so no latency is added to anything: the dashes. "+
				"A dash is also a figure this study did not measure.")
		} else {
			notes = append(notes, "Added latency is the mesh's latency less the baseline's in the same rounds (the Hodges-Lehmann estimate over the units, with Wilcoxon's signed-rank 95% interval); "+
				"an interval across zero is no measurable difference. A dash is the baseline itself or a figure this study did not measure.")
		}
		notes = append(notes, "CPU and memory per 1,000 req/s are the data plane's (sidecars, node proxies, waypoints) mean usage divided by the completed requests a second, "+
			"idle usage included: at a low rate this is mostly what the proxies burn with no traffic, not a marginal cost per request.")
		notes = append(notes, fmt.Sprintf("Dollars price that usage at %s per vCPU-month and %s per GB-month (%s; %s; %d h a month); "+
			"per million requests is the month's price over the requests the measured rate serves in a month; both are means over the deployments (a bill is paid on mean use), with Student's t intervals.",
			dollars(prices.PerVCPUMonth), dollars(prices.PerGBMonth), prices.Source, catalog.PriceTable(), cost.HoursPerMonth))
		if withCP {
			notes = append(notes, "Control plane CPU and memory are its mean usage over the measured window (on the lab, istiod under control_plane istiod), "+
				"apart from the data plane's figures and dollars; Cost prices it.")
		}
	}
	if !haveCells {
		notes = append(notes, "A capacity search runs no cells at a fixed rate, so there are no added latencies or data-plane dollars here; "+
			"Capacity at the SLO prices a million requests at each mesh's capacity.")
	}
	notes = append(notes, kind.note)
	t.Notes = notes
	// A study of one profile under two proxy releases (the regression
	// preset) is answered by the newer release against the older, which
	// the table, per mesh against a baseline, does not hold.
	for _, v := range b.releaseVerdicts() {
		line := "Proxy releases, " + v.text
		if v.config != "" {
			line = "Proxy releases at " + v.config + ", " + v.text
		}
		s.Blocks = append(s.Blocks, text(line+" Proxy releases below gives each figure under both releases."))
	}
	s.Blocks = append(s.Blocks, table(t))
	if ch := b.costChart(costs); ch != nil {
		s.Blocks = append(s.Blocks, chartBlock(ch))
	}
	return s
}

// costChart sets the meshes' data-plane CPU, memory and dollars side by
// side, each as a share of the costliest mesh's figure, so that three
// units fit one axis; the verdict table has the figures themselves.
func (b *builder) costChart(costs map[string][3]analysis.Estimate) *Chart {
	if len(costs) == 0 {
		return nil
	}
	cats := []string{"CPU per 1,000 req/s", "memory per 1,000 req/s", "USD per million requests"}
	var top [3]float64
	for _, e := range costs {
		for i := range top {
			top[i] = max(top[i], e[i].Median)
		}
	}
	var series []chart.BarSeries
	for _, m := range b.d.Meshes {
		e, ok := costs[m]
		if !ok {
			continue
		}
		bs := chart.BarSeries{Name: m, Colour: b.colour[m]}
		for i := range cats {
			if top[i] <= 0 || !e[i].Valid() {
				bs.Bars = append(bs.Bars, chart.Bar{V: nan})
				continue
			}
			bs.Bars = append(bs.Bars, chart.Bar{V: 100 * e[i].Median / top[i], Lo: 100 * e[i].Lo / top[i], Hi: 100 * e[i].Hi / top[i]})
		}
		series = append(series, bs)
	}
	title := "Data plane's CPU, memory and dollars per request, by mesh"
	return &Chart{File: "verdict-costs", Title: title,
		Caption: "Each figure as a percentage of the costliest mesh's, whiskers its 95% interval; the verdict table above gives the figures in their units.",
		SVG:     chart.Bars{Title: title, X: "figure", Y: chart.Axis{Label: "% of the costliest mesh"}, Categories: cats, Series: series}.SVG()}
}

// throughputKind is what the verdict's throughput column holds: capacity
// at the SLO where the study searched for it, else the closed-loop
// capacity calibration measured, else nothing.
type throughputKind struct {
	header string // the column's
	name   string // in the verdict line
	note   string
}

func (b *builder) throughputKind() throughputKind {
	if connectionCeiling(b.d.Capacity) {
		slo := b.d.Capacity[0].SLO
		return throughputKind{header: "Connection ceiling (connections)", name: "concurrent-connection ceiling at " + slo.String(),
			note: fmt.Sprintf("The connection ceiling is the most connections each mesh held open, each sending slow requests, while meeting the SLO (%s), found by search, "+
				"with its 95%% interval (see Concurrent-connection ceiling at the SLO); it is a count of connections, not a rate.", slo)}
	}
	if len(b.d.Capacity) > 0 {
		return throughputKind{name: "capacity at " + b.d.Capacity[0].SLO.String(),
			note: fmt.Sprintf("Throughput is the capacity at the SLO (%s): the highest open-loop rate each mesh sustained while meeting it, found by search, "+
				"with its 95%% interval (see Capacity at the SLO).", b.d.Capacity[0].SLO)}
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

// throughput is a mesh's throughput figure with its interval, and its
// ratio to the baseline's (or the first mesh's).
func (b *builder) throughput(mesh string) (figure, ratio string) {
	if len(b.d.Capacity) > 0 {
		c := b.capacityOf(mesh)
		if c == nil || c.Status != results.StatusOK || c.RPS <= 0 {
			return "—", "—"
		}
		figure = capacityNum(c)
		switch {
		case c.LowerBound:
			figure += " at the SLO (a lower bound)"
		case hasInterval(c):
			figure += fmt.Sprintf(" [%s, %s] at the SLO", num(c.CILow), num(c.CIHigh))
		default:
			figure += " at the SLO (no interval: " + noIntervalWhy(c) + ")"
		}
		ref := b.capacityOf(b.reference())
		if ref == nil || ref == c || ref.Status != results.StatusOK || ref.RPS <= 0 || ref.LowerBound {
			return figure, "—"
		}
		ratio = num(c.RPS/ref.RPS) + "×"
		if c.LowerBound {
			ratio = "≥ " + ratio
		}
		return figure, ratio
	}
	sc := b.d.Index.Provenance.Scaling
	if sc == nil || len(sc.Capacities) == 0 {
		return "—", "—"
	}
	v, ok := sc.Capacities[mesh]
	if !ok {
		return "—", "—"
	}
	figure = num(v) + " (closed loop, 1 measurement)"
	if ref, ok := sc.Capacities[b.reference()]; ok && ref > 0 && mesh != b.reference() {
		ratio = num(v/ref) + "×"
	} else {
		ratio = "—"
	}
	return figure, ratio
}

// perRequestCosts are the data plane's cores and MiB per 1,000 completed
// req/s, medians over the units with their intervals, and its monthly
// price and price per million requests, means over the deployments (a
// bill is paid on mean use) with Student's t intervals.
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
		monthly := cores*p.PerVCPUMonth + gb*p.PerGBMonth
		c = append(c, cores/rate*1000)
		m = append(m, bytes/(1<<20)/rate*1000)
		mo = append(mo, monthly)
		mi = append(mi, monthly/(rate*3600*cost.HoursPerMonth)*1e6)
		reps = append(reps, r)
	}
	median := func(xs []float64) analysis.Estimate { return analysis.MedianCI(analysis.RepSample(reps, xs).Units()) }
	mean := func(xs []float64) analysis.Estimate { return analysis.MeanCI(analysis.RepSample(reps, xs).MeanUnits()) }
	return median(c), median(m), mean(mo), mean(mi)
}

// capacityDataPlaneCPU is a capacity search's data-plane cores per 1,000
// req/s at the capacity, from the fitted lines, with the figures at the
// interval's ends.
func capacityDataPlaneCPU(c *analysis.CapacityMesh) (string, bool) {
	v, lo, hi, interval, ok := capacityDataPlaneCPUAt(c)
	if !ok {
		return "", false
	}
	if !interval {
		return num(v) + " (no interval)", true
	}
	return fmt.Sprintf("%s [%s, %s]", num(v), num(lo), num(hi)), true
}

// capacityDataPlaneCPUAt is capacityDataPlaneCPU's figures: the cores per
// 1,000 req/s at the capacity and, where the capacity has an interval,
// at its ends.
func capacityDataPlaneCPUAt(c *analysis.CapacityMesh) (v, lo, hi float64, interval, ok bool) {
	if c.Status != results.StatusOK || c.RPS <= 0 {
		return 0, 0, 0, false, false
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
		return 0, 0, 0, false, false
	}
	if c.LowerBound || !hasInterval(c) || c.CILow <= 0 {
		return v, 0, 0, false, true
	}
	a, _ := at(c.CILow)
	z, _ := at(c.CIHigh)
	return v, min(a, z), max(a, z), true, true
}

// verdictLine is one sentence per mesh: what it adds, what it sustains,
// and the caveat the figures carry.
func (b *builder) verdictLine(mesh string, overheads []analysis.Diff, kind throughputKind) string {
	var parts []string
	if mesh == b.reference() {
		return "the reference the others are measured against."
	} else if len(overheads) == 3 {
		parts = append(parts, latencyPhrase(overheads[0], overheads[2]))
	}
	if fig, ratio := b.throughput(mesh); fig != "—" && ratio != "—" && kind.name != "" {
		verb := "sustains "
		if connectionCeiling(b.d.Capacity) {
			verb = "holds "
		}
		parts = append(parts, verb+ratio+" "+b.reference()+"'s "+kind.name)
	}
	if len(parts) == 0 {
		if b.d.Baseline == "" && len(b.releaseVerdicts()) > 0 {
			return "against " + b.reference() + " in the proxy releases line above."
		}
		return "not enough data for a verdict"
	}
	line := strings.Join(parts, "; ")
	if b.d.Index.Provenance.Platform.Name == infra.Lab {
		line += ". Caveat: emulated with upstream Envoy on one host, without Istio's filters"
	} else if len(b.d.Configs) > 1 {
		line += ". Caveat: at one load configuration of several"
	}
	return line + "."
}

// latencyPhrase says what a mesh adds at p50 and p99.
func latencyPhrase(p50, p99 analysis.Diff) string {
	j50, j99 := analysis.Judge(p50), analysis.Judge(p99)
	switch {
	case j50 == analysis.TooFewRuns || j99 == analysis.TooFewRuns:
		return "too few runs to tell its latency"
	case j50 == analysis.NoDifference && j99 == analysis.NoDifference:
		return "no measurable added latency"
	}
	return fmt.Sprintf("%s at p50, %s at p99", phraseShort(p50), phraseShort(p99))
}

func phraseShort(d analysis.Diff) string {
	switch analysis.Judge(d) {
	case analysis.Higher:
		return "adds " + num(d.Delta.Median) + " ms"
	case analysis.Lower:
		return num(-d.Delta.Median) + " ms faster"
	}
	return "no measurable difference"
}

// addedText is a difference in ms with its interval.
func addedText(e analysis.Estimate) string {
	if !e.Interval() {
		return signed(e.Median) + " (too few runs)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", signed(e.Median), signed(e.Lo), signed(e.Hi), levelText(e))
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
