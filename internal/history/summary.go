package history

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
)

// SeriesSummary is an analysed series as `history series -o json`, the
// gate and the dashboard give it.
type SeriesSummary struct {
	Key      Key            `json:"key"`
	ID       string         `json:"id"`
	Title    string         `json:"title"`
	Mesh     string         `json:"mesh"`
	Metric   string         `json:"metric_label"`
	Level    float64        `json:"level"`
	Noise    float64        `json:"noise"`
	TooShort bool           `json:"too_short,omitempty"`
	Unstable bool           `json:"unstable,omitempty"`
	Points   []PointSummary `json:"points"`
	Changes  []ChangeReport `json:"change_points"`
}

// PointSummary is one point of a series.
type PointSummary struct {
	Run     string    `json:"run"`
	Start   time.Time `json:"start"`
	Mesh    string    `json:"mesh"`
	Release string    `json:"release,omitempty"`
	Label   string    `json:"label"`
	Median  float64   `json:"median"`
	Lo      float64   `json:"lo"`
	Hi      float64   `json:"hi"`
	N       int       `json:"n"`
	Level   float64   `json:"level"`
}

// ChangeReport is one change point as reports give it.
type ChangeReport struct {
	At int `json:"at"`
	// After is the first point after the change.
	After PointSummary `json:"first_after"`
	P     float64      `json:"p_value"`
	// Delta and Pct are the change's size, after minus before, with
	// their 95% intervals (analysis.Estimate: lo = hi without one).
	Delta      analysis.Estimate `json:"delta"`
	Pct        analysis.Estimate `json:"pct"`
	Regression bool              `json:"regression"`
	Provenance []string          `json:"provenance"`
	Text       string            `json:"text"`
}

// Summary gives the analysis as reports show it.
func (a *Analysis) Summary() SeriesSummary {
	s := SeriesSummary{Key: a.Key, ID: a.Key.ID(), Title: a.Title(), Mesh: a.MeshLabel(), Metric: a.MetricLabel(),
		Level: a.Level, Noise: a.Noise, TooShort: a.TooShort, Unstable: a.Unstable, Points: []PointSummary{}, Changes: []ChangeReport{}}
	for i, p := range a.Points {
		s.Points = append(s.Points, pointSummary(p, a.PointLabel(i)))
	}
	for _, c := range a.Changes {
		s.Changes = append(s.Changes, a.report(c))
	}
	return s
}

func (a *Analysis) report(c ChangePoint) ChangeReport {
	return ChangeReport{At: c.At, After: pointSummary(a.Points[c.At], a.PointLabel(c.At)), P: c.P, Delta: c.Diff.Delta, Pct: c.Diff.Pct,
		Regression: c.Regression(a.Metric()), Provenance: c.Provenance, Text: a.Describe(c)}
}

func pointSummary(p Point, label string) PointSummary {
	f := p.Figure
	return PointSummary{Run: p.Run.ID, Start: p.Run.Start, Mesh: p.Mesh.Name, Release: p.Mesh.Release, Label: label,
		Median: f.Median, Lo: f.Lo, Hi: f.Hi, N: f.N, Level: f.Level}
}

// WriteRuns lists runs, oldest first.
func WriteRuns(w io.Writer, runs []*Run) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTART\tSTUDY\tHOST\tMESHBENCH\tMESHES\tFIGURES\tDIRECTORY")
	for _, r := range runs {
		var meshes []string
		for _, m := range r.Meshes {
			name := m.Name
			if m.Release != "" {
				name += "@" + m.Release
			}
			meshes = append(meshes, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Start.Format("2006-01-02 15:04"), r.Study, r.HostClass,
			r.Provenance.MeshbenchVersion, strings.Join(meshes, ","), len(r.Figures), r.Dir)
	}
	return tw.Flush()
}

// WriteSeries lists the series and their change points: the stable ones,
// then the unstable ones apart, then those too short to judge.
func WriteSeries(w io.Writer, as []*Analysis) error {
	var stable, unstable, short []*Analysis
	for _, a := range as {
		switch {
		case a.TooShort:
			short = append(short, a)
		case a.Unstable:
			unstable = append(unstable, a)
		default:
			stable = append(stable, a)
		}
	}
	section := func(title string, as []*Analysis) {
		if len(as) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		for _, a := range as {
			fmt.Fprintf(w, "  %s: %d points, level %.4g, noise %.3g (%.1f%%)\n", a.Title(), len(a.Points), a.Level, a.Noise, pctOf(a.Noise, a.Level))
			if len(a.Changes) == 0 && !a.TooShort {
				fmt.Fprintln(w, "    no change point")
			}
			for _, c := range a.Changes {
				mark := ""
				if c.Regression(a.Metric()) {
					mark = " [regression]"
				}
				fmt.Fprintf(w, "    change point%s %s\n", mark, a.Describe(c))
			}
		}
	}
	section("Series", stable)
	section(fmt.Sprintf("Unstable series (noise above %g%% of the level; they do not gate)", UnstablePct), unstable)
	section(fmt.Sprintf("Series too short to judge (fewer than %d points)", 2*MinSegment), short)
	if len(as) == 0 {
		fmt.Fprintln(w, "no series: add runs with meshbench history add DIR")
	}
	return nil
}

// WriteText says what the gate found.
func (v *Verdict) WriteText(w io.Writer) error {
	var ids []string
	for _, r := range v.New {
		ids = append(ids, r.ID+" ("+r.Study+", "+r.Start.Format("2006-01-02 15:04")+")")
	}
	fmt.Fprintf(w, "new runs: %s\n", orNone(strings.Join(ids, ", ")))
	fmt.Fprintf(w, "%d series of primary metrics (%s) read\n", len(v.Series), strings.Join(PrimaryMetrics, ", "))
	for _, f := range v.Regressions {
		fmt.Fprintf(w, "REGRESSION %s: %s\n", f.Title(), f.Describe(f.Change))
	}
	for _, f := range v.Unstable {
		fmt.Fprintf(w, "in an unstable series, not gating: %s: %s\n", f.Title(), f.Describe(f.Change))
	}
	if len(v.Regressions) == 0 {
		fmt.Fprintf(w, "no regression: the new runs introduced no change point that made a primary metric worse by %g%% or more\n", analysis.RegressionMinPct)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func pctOf(v, level float64) float64 {
	if level == 0 {
		return 0
	}
	return 100 * v / abs(level)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// VerdictSummary is the gate's verdict as `history check -o json` gives it.
type VerdictSummary struct {
	New         []string         `json:"new_runs"`
	Series      int              `json:"series"`
	Regressions []FindingSummary `json:"regressions"`
	Unstable    []FindingSummary `json:"unstable"`
}

// FindingSummary is one change point the gate found, with its series.
type FindingSummary struct {
	Series string       `json:"series"`
	ID     string       `json:"series_id"`
	Change ChangeReport `json:"change_point"`
}

// Summary gives the verdict as reports show it.
func (v *Verdict) Summary() VerdictSummary {
	out := VerdictSummary{New: []string{}, Series: len(v.Series), Regressions: []FindingSummary{}, Unstable: []FindingSummary{}}
	for _, r := range v.New {
		out.New = append(out.New, r.ID)
	}
	for _, f := range v.Regressions {
		out.Regressions = append(out.Regressions, FindingSummary{Series: f.Title(), ID: f.Key.ID(), Change: f.report(f.Change)})
	}
	for _, f := range v.Unstable {
		out.Unstable = append(out.Unstable, FindingSummary{Series: f.Title(), ID: f.Key.ID(), Change: f.report(f.Change)})
	}
	return out
}
