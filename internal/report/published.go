package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
)

// fidelityFactor is how far a figure may be from the published one and
// still count as reproduced in the verdict: within 2x either way.
const fidelityFactor = 2.0

// Istio's published data-plane CPU per proxy, which the verdict sets
// beside its CPU per proxy pass: the one place the report holds it.
const (
	istioProxyCPUPer1000 = 0.20
	istioProxyCPUSource  = "Istio 1.24's Performance and Scalability page (istio.io): an Envoy proxy uses 0.20 vCPU per 1,000 requests a second going through it, " +
		"in Istio's load-test mesh of 1,000 services and 2,000 pods carrying 70,000 requests a second"
)

// published sets the study's published figures beside this run's: each
// figure with its source, the run's counterpart and their ratio; then,
// per metric, whether the run orders the meshes as the study did and the
// ratio of the largest overhead to the smallest; then a verdict.
func (b *builder) published() Section {
	s := Section{ID: "published", Title: "Against the published study"}
	fs := b.d.Fidelities()
	if len(fs) == 0 {
		return s
	}
	t := &Table{Header: []string{"Figure", "Mesh", "Configuration", "Published", "This run", "Ratio", "Verdict", "Source"}}
	within, measured := 0, 0
	for _, f := range fs {
		p := f.Published
		run, ratio, verdict := "not measured", "—", "not measured"
		if f.OK {
			measured++
			run = num(f.Measured)
			if r := f.Ratio(); r > 0 {
				ratio = num(r) + "×"
				ok := false
				verdict, ok = fidelityVerdict(f)
				if ok {
					within++
				}
			} else {
				verdict = "opposite sign or zero"
			}
		}
		cfg := f.Config.Params
		if !f.OK {
			cfg = p.Params
		}
		t.Rows = append(t.Rows, []string{figureLabel(p.Metric, p.Against), p.Mesh, cmpOr(analysis.ParamsText(cfg), "all"),
			num(p.Value) + " " + f.Unit(), run, ratio, verdict, p.Source})
	}
	t.Notes = []string{"This run's figure is the median over its usable repetitions, at the configuration named; in a run scaled by tenants, at the smallest tenant count measured, as measured for a tenant (latency is never extrapolated). Ratio is this run over the published figure."}
	s.Blocks = append(s.Blocks, table(t))
	var lines []string
	reproduced := 0
	reps := b.d.Reproductions(fs)
	for _, r := range reps {
		line := fmt.Sprintf("%s%s: published order %s; this run %s — ", figureLabel(r.Metric, ""), atParams(r.Params),
			strings.Join(r.Published, " < "), strings.Join(r.Measured, " < "))
		switch {
		case len(r.Swaps) == 0:
			line += "the ordering reproduces"
		case r.Reproduces():
			line += "the ordering reproduces within this run's precision (" + swapsText(r.Swaps) + ")"
		default:
			line += "the ordering does NOT reproduce (" + swapsText(r.Swaps) + ")"
		}
		if r.Reproduces() {
			reproduced++
		}
		if r.PublishedSpread > 0 {
			line += fmt.Sprintf("; largest over smallest overhead %s× published, %s× here", num(r.PublishedSpread), num(r.MeasuredSpread))
		}
		lines = append(lines, line+".")
	}
	if len(lines) > 0 {
		s.Blocks = append(s.Blocks, heading("Ordering of the meshes"), Block{List: lines})
	}
	if why := b.throughputRatios(fs); why != "" {
		s.Blocks = append(s.Blocks, heading("Throughput ratios and the app's cost"), text(why))
	}
	verdict := fmt.Sprintf("Verdict: %d of %d published figures measured, %d of them close to the published value (within %s×; ratios to the baseline within %s)",
		measured, len(fs), within, num(fidelityFactor), num(ratioTolerance))
	if len(reps) > 0 {
		verdict += fmt.Sprintf("; the meshes' ordering reproduces in %d of %d comparisons", reproduced, len(reps))
	}
	s.Blocks = append(s.Blocks, text(verdict+"."))
	return s
}

// swapsText says which meshes a run orders against the study, and
// whether it can tell them apart.
func swapsText(ss []analysis.Swap) string {
	var parts []string
	for _, s := range ss {
		how := "the 95% interval of their difference includes zero, so this run cannot tell them apart"
		if s.Apart {
			how = "this run tells them apart"
		}
		parts = append(parts, fmt.Sprintf("%s above %s: %s", s.Low, s.High, how))
	}
	return strings.Join(parts, "; ")
}

// ratioTolerance is how far a ratio to the baseline (such as a mesh's
// share of the baseline's throughput) may be from the published one and
// still count as reproduced: those are close to 1, and 2x would say nothing.
const ratioTolerance = 0.05

// fidelityVerdict says how close a measured figure is to its published
// one, and whether that counts as reproduced.
func fidelityVerdict(f analysis.Fidelity) (string, bool) {
	if rel, _ := f.Published.Split(); rel == results.RelationRatio {
		d := f.Measured - f.Published.Value
		if math.Abs(d) <= ratioTolerance {
			return fmt.Sprintf("within %s", num(ratioTolerance)), true
		}
		return fmt.Sprintf("%+.3f off (more than %s)", d, num(ratioTolerance)), false
	}
	switch r := f.Ratio(); {
	case r >= 1/fidelityFactor && r <= fidelityFactor:
		return fmt.Sprintf("within %s×", num(fidelityFactor)), true
	case r > fidelityFactor:
		return fmt.Sprintf("%s× higher", num(r)), false
	default:
		return fmt.Sprintf("%s× lower", num(1/r)), false
	}
}

// figureLabel names a published metric in words.
func figureLabel(metric, against string) string {
	for _, r := range []struct{ prefix, label string }{
		{"added:", "added "}, {"ratio:", "ratio of "}, {"reduction:", "reduction in "},
	} {
		if base, ok := strings.CutPrefix(metric, r.prefix); ok {
			s := r.label + analysis.Metric(base).Label()
			if against != "" {
				s += " against " + against
			}
			return s
		}
	}
	return analysis.Metric(metric).Label()
}

func atParams(p map[string]string) string {
	if t := analysis.ParamsText(p); t != "" {
		return " at " + t
	}
	return ""
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// tenants shows a tenant-scaled run's additive figures at the two tenant
// counts measured and extrapolated to the study's, flagging each whose
// per-tenant figures disagree by more than the linearity tolerance.
func (b *builder) tenants() Section {
	s := Section{ID: "tenants", Title: "Extrapolated to the study's tenants"}
	es := b.d.Extrapolations()
	if len(es) == 0 {
		return s
	}
	sc := b.d.Index.Provenance.Scaling
	e0 := es[0]
	intro := fmt.Sprintf("The lab loaded %d and %d of the study's %d tenants, each at %s req/s. CPU, memory, container counts and requests add up over tenants: "+
		"each is extrapolated to %d tenants along the line through the two measurements, and the per-tenant figures at both counts are compared "+
		"(more than %s%% apart is flagged: a shared component's fixed part, or contention); a figure equal at both is a shared component's and stays as it is. Latency is not extrapolated: it is reported as measured for a tenant.",
		e0.K1, e0.K2, e0.N, num(sc.TenantRate), e0.N, num(100*analysis.LinearityTolerance))
	if sc.Deployed != "all" {
		intro += " Only the loaded tenants were deployed: a proxy's memory grows with the number of services it knows, so the extrapolated memory of the proxies is a lower bound for a cluster with every tenant deployed."
	}
	s.Blocks = append(s.Blocks, text(intro))
	t := &Table{Header: []string{"Mesh", "Configuration", "Figure", fmt.Sprintf("k=%d", e0.K1), fmt.Sprintf("k=%d", e0.K2),
		fmt.Sprintf("k=%d (extrapolated)", e0.N), "Per-tenant disagreement", "Scales with tenants"}}
	flagged := 0
	for _, e := range es {
		lin := "proportionally"
		switch {
		case e.Fixed():
			lin = "fixed (shared)"
		case !e.Linear():
			lin, flagged = "NOT proportionally", flagged+1
		}
		dis := "—"
		if d := e.Disagreement(); !math.IsInf(d, 0) {
			dis = num(100*d) + "%"
		}
		unit := ""
		if e.Unit != "" {
			unit = " " + e.Unit
		}
		t.Rows = append(t.Rows, []string{e.Mesh, cmpOr(analysis.ParamsText(e.Config.Params), "all"), e.Figure,
			num(e.At1) + unit, num(e.At2) + unit, num(e.AtN) + unit, dis, lin})
	}
	t.Notes = []string{"Medians over the usable repetitions; containers and requests from the first repetition."}
	s.Blocks = append(s.Blocks, table(t))
	if flagged > 0 {
		s.Blocks = append(s.Blocks, text(fmt.Sprintf("%d of %d extrapolated figures are not proportional to the tenants loaded (per-tenant figures more than %s%% apart): their extrapolation rests on a straight line through two points and is less certain.",
			flagged, len(es), num(100*analysis.LinearityTolerance))))
	}
	return s
}

// throughputRatios explains, from the run's own calibration, how close the
// meshes' throughput ratios to the baseline could come to the published
// ones: in a closed loop at saturation a mesh's ratio is 1/(1 + share),
// share being what its proxies cost per request over what the app costs,
// and one app cost matches every published ratio only if the lab's
// proxies cost what the study's did relative to each other. Empty unless
// the app's cost was calibrated and a ratio of throughput is published.
func (b *builder) throughputRatios(fs []analysis.Fidelity) string {
	sc := b.d.Index.Provenance.Scaling
	if sc == nil || sc.Work == nil || len(sc.Work.SharesAfter) == 0 {
		return ""
	}
	w := sc.Work
	var parts []string
	for _, f := range fs {
		p := f.Published
		rel, base := p.Split()
		if rel != results.RelationRatio || base != "qps" || !f.OK {
			continue // the calibration's shares explain only the ratios this run measured
		}
		study, ok1 := w.StudyShares[p.Mesh]
		lab, ok2 := w.SharesAfter[p.Mesh]
		if !ok1 || !ok2 {
			continue
		}
		part := fmt.Sprintf("%s%s: its proxies cost %s of the app in the study (ratio %s) and %s here, measured by the calibration with the calibrated work (ratio %s expected)",
			p.Mesh, atParams(p.Params), pct(study), num(1/(1+study)), pct(lab), num(1/(1+lab)))
		part += fmt.Sprintf("; the cells measured %s", num(f.Measured))
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	out := "In a closed loop at saturation a mesh's throughput over the baseline's is 1 / (1 + share), the share being what its proxies cost per request over what the app costs. " +
		strings.Join(parts, ". ") + "."
	if sidecar, ambient := w.SharesAfter["sidecar"], w.SharesAfter["ambient"]; sidecar > 0 && ambient > 0 && w.StudyShares["ambient"] > 0 {
		out += fmt.Sprintf(" Per request the sidecars cost %s× what the node proxies cost here, %s× in the study: ",
			num(sidecar/ambient), num(w.StudyShares["sidecar"]/w.StudyShares["ambient"]))
		out += "one app cost gives both published ratios only when the proxies cost what the study's did relative to each other (the lab's node proxy is Envoy in ztunnel's role, not ztunnel, and its sidecars lack Istio's telemetry filters), so the calibration sets the app's cost between what each ratio asks for, and the difference left is the lab's proxies', not the app's."
	}
	return out
}
