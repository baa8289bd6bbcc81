package report

import (
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
)

// releases reads each pair of meshes that differ only in their proxy
// release (the regression preset: one profile under two Envoy releases,
// interleaved in every round) as the newer release against the older: a
// verdict on p50 and CPU per request with their intervals, the regression
// gate's decision, and a table of every figure it judges.
func (b *builder) releases() Section {
	s := Section{ID: "releases", Title: "Proxy releases"}
	verdicts := b.releaseVerdicts()
	if len(verdicts) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, text(fmt.Sprintf("Each pair of meshes that differ only in the proxy release they ran, the newer against the older, in the same rounds. "+
		"Differences are the newer minus the older, paired by round: the Hodges-Lehmann estimate with Wilcoxon's signed-rank interval over the units. "+
		"A difference whose interval includes zero is no measurable difference. "+
		"The regression gate judges the pair's p50, p99 and data-plane CPU per request at every configuration as one family: a figure regresses when Holm's procedure "+
		"at a %.0f%% family-wise false-alarm rate rejects it on its one-sided signed-rank p-value and it is worse by at least %g%%.",
		100*analysis.GateAlpha, analysis.RegressionMinPct)))
	for _, v := range verdicts {
		s.Blocks = append(s.Blocks, heading(v.label), text(v.text), table(releaseTable(v.pair, v.changes)))
	}
	return s
}

// releaseJudgement is one release pair's verdict at one configuration.
type releaseJudgement struct {
	pair    analysis.ReleasePair
	changes []analysis.Change
	label   string // the releases, and the configuration when there are several
	config  string // the configuration's label when there are several, else empty
	text    string // releaseVerdict's sentence
}

// releaseVerdicts judges each release pair at each configuration, for the
// report's verdict and its Proxy releases section.
func (b *builder) releaseVerdicts() []releaseJudgement {
	d := b.d
	var out []releaseJudgement
	pairs := d.ReleasePairs()
	// Where several profiles run under the releases, each line names its
	// profile.
	profiles := map[string]bool{}
	for _, p := range pairs {
		profiles[p.Profile] = true
	}
	for _, p := range pairs {
		byConfig := map[string][]analysis.Change{}
		changes, _ := analysis.CompareMeshes(d, p.Older, p.Newer, analysis.RegressionMetrics)
		for _, ch := range changes {
			byConfig[ch.Config.Key] = append(byConfig[ch.Config.Key], ch)
		}
		for _, cfg := range d.Configs {
			changes := byConfig[cfg.Key]
			if len(changes) == 0 {
				continue
			}
			j := releaseJudgement{pair: p, changes: changes, label: p.NewerRelease + " against " + p.OlderRelease, text: releaseVerdict(p, changes)}
			if len(profiles) > 1 {
				j.label, j.text = p.Profile+" "+j.label, p.Profile+" "+j.text
			}
			if cfg.Key != "" {
				j.config = cfg.Label()
				j.label += ", " + j.config
			}
			out = append(out, j)
		}
	}
	return out
}

// releaseVerdict is the verdict's sentence: "1.40.0 against 1.38.3: p50
// +x ms [lo, hi], CPU per request +y% [lo, hi]", or "no measurable
// difference" when both intervals include zero; then the gate's decision.
func releaseVerdict(p analysis.ReleasePair, changes []analysis.Change) string {
	var parts []string
	measurable := false
	var regressed []string
	for _, ch := range changes {
		if ch.Regression {
			regressed = append(regressed, ch.Metric.Label())
		}
		if analysis.Judge(ch.Diff) == analysis.Higher || analysis.Judge(ch.Diff) == analysis.Lower {
			measurable = true
		}
		switch ch.Metric {
		case analysis.P50:
			parts = append(parts, "p50 "+deltaInterval(ch.Diff.Delta, " ms"))
		case analysis.P99:
			parts = append(parts, "p99 "+deltaInterval(ch.Diff.Delta, " ms"))
		case analysis.CPUPerRequest:
			parts = append(parts, "CPU per request "+deltaInterval(ch.Diff.Pct, "%"))
		}
	}
	head := p.NewerRelease + " against " + p.OlderRelease + ": "
	var v string
	if measurable {
		v = head + strings.Join(parts, ", ") + "."
	} else {
		v = head + "no measurable difference (" + strings.Join(parts, ", ") + ")."
	}
	if len(regressed) > 0 {
		return v + " Regression gate: " + p.NewerRelease + " regressed on " + strings.Join(regressed, ", ") + "."
	}
	return v + " Regression gate: no regression."
}

// deltaInterval formats a difference as "+x unit [lo, hi]", with the
// interval's level where it is below the nominal one.
func deltaInterval(e analysis.Estimate, unitName string) string {
	if !e.Interval() {
		return signed(e.Median) + unitName + " (too few runs for an interval)"
	}
	return fmt.Sprintf("%s%s [%s, %s]%s", signed(e.Median), unitName, signed(e.Lo), signed(e.Hi), levelText(e))
}

// releaseTable lists each judged figure under both releases.
func releaseTable(p analysis.ReleasePair, changes []analysis.Change) *Table {
	t := &Table{Header: []string{"Figure", p.OlderRelease + " (" + p.Older + ")", p.NewerRelease + " (" + p.Newer + ")", "Difference", "Verdict"}}
	for _, ch := range changes {
		scale, u := unit(ch.Metric)
		v := verdictText(ch.Diff)
		if ch.Regression {
			v = "REGRESSED"
		}
		t.Rows = append(t.Rows, []string{ch.Metric.Label(), est(ch.Diff.Base, scale), est(ch.Diff.Other, scale), diffText(ch.Diff, scale, u), v})
	}
	return t
}
