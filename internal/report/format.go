package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
)

// num formats a figure with about three significant digits and no
// exponent, the precision the measurements support.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01 || a == 0:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// signed is num with an explicit sign.
func signed(v float64) string {
	s := num(v)
	if v > 0 || (v == 0 && !strings.HasPrefix(s, "-")) {
		return "+" + s
	}
	return s
}

// sliced is a title with the load configuration it is at, unless that
// configuration sets no parameter (the study varies nothing else).
func sliced(title string, c analysis.LoadConfig) string {
	if c.Key == "" {
		return title
	}
	return title + ", " + c.Label()
}

// unit scales a metric's values for display: milliseconds, cores and
// MiB stay, bytes become MiB.
func unit(m analysis.Metric) (scale float64, name string) {
	switch {
	case m.IsMemory():
		return 1.0 / (1 << 20), "MiB"
	case m.IsCPU():
		return 1, "cores"
	case m.IsLatency():
		return 1, "ms"
	case m == analysis.Duration:
		return 1, "s"
	case m == analysis.ErrorPct:
		return 1, "%"
	}
	return 1, ""
}

// est formats an estimate as "median [lo, hi]", with the interval's level
// where the design could not reach 95% ("[lo, hi], 75%"); a single run
// shows its value and says it has no interval; no runs show a dash. A
// number censored by timeouts shows its bound: "≥ 30000".
func est(e analysis.Estimate, scale float64) string {
	switch {
	case !e.Valid():
		return "—"
	case !e.Interval():
		return bounded(num(e.Median*scale), e.MedianBound) + " (1 run)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", bounded(num(e.Median*scale), e.MedianBound), bounded(num(e.Lo*scale), e.LoBound), bounded(num(e.Hi*scale), e.HiBound), levelText(e))
}

// bounded marks a formatted number with its bound: "≥ x" for a figure
// censored at the timeout, "≤ x" for a difference less one, "x
// (censored)" for one censored both ways, which bounds nothing.
func bounded(s string, b analysis.Bound) string {
	switch b {
	case analysis.AtLeast:
		return "≥ " + s
	case analysis.AtMost:
		return "≤ " + s
	case analysis.Unbounded:
		return s + " (censored)"
	}
	return s
}

// censoredNote says what a "≥" or "≤" means, for tables that show one.
const censoredNote = "A figure marked ≥ is censored: failed and timed-out requests count in each run's percentiles at the cell's timeout, " +
	"so a percentile that lands on them is at least that; a difference against such a baseline is marked ≤, and one whose interval end is only a bound on the wrong side of zero is not measurable."

// levelText is an interval's level after it, ", 75%", when it is below
// the nominal 95%; "" otherwise, for 95% is what an unmarked interval
// means in every report.
func levelText(e analysis.Estimate) string {
	if !e.BelowNominal() {
		return ""
	}
	return ", " + levelPct(e.Level)
}

// levelPct writes a level as a percentage with the digits it needs:
// 75%, 87.5%, 93.75%.
func levelPct(l float64) string {
	return strconv.FormatFloat(math.Round(100*l*100)/100, 'f', -1, 64) + "%"
}

// MinPercentBaseMs is the smallest baseline latency a percentage is taken
// of. Below it the baseline is mostly the loopback and the kernel, so a
// mesh's fixed cost of a few hundred microseconds reads as hundreds of
// percent: a statement about the lab, not the mesh.
const MinPercentBaseMs = 1.0

// percentMeaningful reports whether a difference's percentage is worth
// printing: always for figures other than latencies, and for a latency
// only when the baseline's median is at least MinPercentBaseMs.
func percentMeaningful(d analysis.Diff, unitName string) bool {
	return unitName != "ms" || d.Base.Median >= MinPercentBaseMs
}

// noPercent says why a latency difference has no percentage.
const noPercent = "no % (baseline under 1 ms)"

// diffText formats a difference in the metric's unit and in percent.
func diffText(d analysis.Diff, scale float64, unitName string) string {
	if !d.Delta.Valid() {
		return "—"
	}
	u := ""
	if unitName != "" && unitName != "%" {
		u = " " + unitName
	}
	pctOK := percentMeaningful(d, unitName)
	dm, dl, dh := bounded(signed(d.Delta.Median*scale), d.Delta.MedianBound), bounded(signed(d.Delta.Lo*scale), d.Delta.LoBound), bounded(signed(d.Delta.Hi*scale), d.Delta.HiBound)
	pm, pl, ph := bounded(signed(d.Pct.Median), d.Pct.MedianBound), bounded(signed(d.Pct.Lo), d.Pct.LoBound), bounded(signed(d.Pct.Hi), d.Pct.HiBound)
	if !d.Delta.Interval() {
		if !pctOK {
			return fmt.Sprintf("%s%s (%s), too few runs for an interval", dm, u, noPercent)
		}
		return fmt.Sprintf("%s%s (%s%%), too few runs for an interval", dm, u, pm)
	}
	if !pctOK {
		return fmt.Sprintf("%s%s [%s, %s]%s (%s)", dm, u, dl, dh, levelText(d.Delta), noPercent)
	}
	return fmt.Sprintf("%s%s [%s, %s]%s (%s%% [%s, %s])", dm, u, dl, dh, levelText(d.Delta), pm, pl, ph)
}

// verdictText says in words what a difference against a reference shows.
func verdictText(d analysis.Diff) string {
	switch analysis.Judge(d) {
	case analysis.Higher:
		return "higher"
	case analysis.Lower:
		return "lower"
	case analysis.NoDifference:
		return "no measurable difference"
	case analysis.Censored:
		return "not measurable: censored by timeouts"
	}
	return "too few runs to tell"
}

// slug makes a string safe as a file name and an HTML id.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// runs says how many repetitions a figure rests on and how many were left
// out.
func runs(g *analysis.Group) string {
	if g == nil {
		return "not run"
	}
	if len(g.Excluded) == 0 {
		return strconv.Itoa(len(g.Reps))
	}
	return fmt.Sprintf("%d (%d excluded)", len(g.Reps), len(g.Excluded))
}

// plural is n with the singular or plural phrase: "1 cell was", "2 cells
// were".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
