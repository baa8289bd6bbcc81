package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

// ErrThresholds is returned, wrapped, when a study's thresholds were not
// all met (see ThresholdsNotMet).
var ErrThresholds = errors.New("a study's thresholds were not met")

// A threshold's outcomes. Not measured counts as not met: a gate that
// passed on a figure the run lost would pass on a broken run.
const (
	ThresholdMet         = "met"
	ThresholdNotMet      = "not met"
	ThresholdNotMeasured = "not measured"
)

// ThresholdOutcome is one threshold of the study judged for one mesh
// against the verdict's estimate.
type ThresholdOutcome struct {
	// Threshold is the threshold as the study file writes it.
	Threshold string  `json:"threshold"`
	Metric    string  `json:"metric"`
	Mesh      string  `json:"mesh"`
	Op        string  `json:"op"`
	Limit     float64 `json:"limit"`
	Unit      string  `json:"unit"`
	// Value is the verdict's estimate, absent when not measured; Low and
	// High its interval at Level, absent without one.
	Value *float64 `json:"value,omitempty"`
	Low   *float64 `json:"low,omitempty"`
	High  *float64 `json:"high,omitempty"`
	Level *float64 `json:"level,omitempty"`
	// LowerBound says Value is a lower bound: a capacity search that
	// stopped short.
	LowerBound bool   `json:"lower_bound,omitempty"`
	Met        bool   `json:"met"`
	Status     string `json:"status"`
	// Why says why the figure was not measured.
	Why string `json:"why,omitempty"`
}

// Line is the outcome as meshbench prints it, one line.
func (o ThresholdOutcome) Line() string {
	who := o.Mesh
	if who == "" {
		who = "every mesh"
	}
	head := fmt.Sprintf("threshold %s: %s %s %s", who, o.Metric, o.Op, strconv.FormatFloat(o.Limit, 'g', -1, 64))
	switch o.Status {
	case ThresholdMet:
		return head + ": met, " + o.figure()
	case ThresholdNotMet:
		return head + ": NOT met, " + o.figure()
	}
	return head + ": not measured, which counts as not met: " + o.Why
}

// figure is the outcome's value with its unit and interval.
func (o ThresholdOutcome) figure() string {
	if o.Value == nil {
		return "—"
	}
	withUnit := func(v float64) string {
		if o.Unit == "×" {
			return num(v) + "×"
		}
		return num(v) + " " + o.Unit
	}
	switch {
	case o.LowerBound:
		return "≥ " + withUnit(*o.Value) + " (a lower bound: the search stopped short)"
	case o.Low == nil || o.High == nil:
		return withUnit(*o.Value) + " (no interval)"
	}
	s := fmt.Sprintf("%s [%s, %s]", withUnit(*o.Value), num(*o.Low), num(*o.High))
	if o.Level != nil {
		s += " at " + levelPct(*o.Level)
	}
	return s
}

// thresholdsError is the error of thresholds not all met.
type thresholdsError struct{ notMet, notMeasured, of int }

func (e *thresholdsError) Error() string {
	s := fmt.Sprintf("%d of %d thresholds not met", e.notMet, e.of)
	if e.notMeasured > 0 {
		s += fmt.Sprintf(" (%d of them not measured, which counts as not met)", e.notMeasured)
	}
	return s + "; each is listed above"
}

func (e *thresholdsError) Unwrap() error { return ErrThresholds }

// ThresholdsNotMet is an error wrapping ErrThresholds that counts the
// outcomes not met, nil when every one was met.
func ThresholdsNotMet(judged []ThresholdOutcome) error {
	e := &thresholdsError{of: len(judged)}
	for _, o := range judged {
		if !o.Met {
			e.notMet++
		}
		if o.Status == ThresholdNotMeasured {
			e.notMeasured++
		}
	}
	if e.notMet == 0 {
		return nil
	}
	return e
}

// Thresholds judges the thresholds of the study file d keeps against d's
// verdict: one outcome per threshold and mesh, in the file's order; none
// when the study sets none. A threshold without a mesh is judged for
// every mesh of the study but the baseline (the reference the others are
// measured against). An error is a kept study file whose thresholds
// cannot be read.
func Thresholds(d *analysis.Dataset) ([]ThresholdOutcome, error) {
	ts, meshes, err := keptThresholds(d)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	b := &builder{d: d}
	var out []ThresholdOutcome
	for _, t := range ts {
		if t.Mesh != "" {
			out = append(out, b.judge(t, t.Mesh))
			continue
		}
		ref, n := b.reference(), 0
		for _, m := range meshes {
			if cmp.Or(meshProfile(d, m.Name), m.Profile) == mesh.ProfileBaseline || m.Name == ref {
				continue
			}
			out = append(out, b.judge(t, m.Name))
			n++
		}
		if n == 0 {
			o := outcome(t)
			o.Status, o.Why = ThresholdNotMeasured, "the study runs no mesh but the baseline"
			out = append(out, o)
		}
	}
	return out, nil
}

// keptMesh is what judging thresholds needs of a study's mesh.
type keptMesh struct {
	Name      string   `json:"name"`
	Profile   string   `json:"profile"`
	Platforms []string `json:"platforms"`
}

// UnmarshalJSON reads a mesh as the study file writes it: a mapping, or a
// profile's name alone.
func (m *keptMesh) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &m.Profile); err != nil {
			return err
		}
	} else {
		type plain keptMesh
		if err := json.Unmarshal(b, (*plain)(m)); err != nil {
			return err
		}
	}
	if m.Name == "" {
		m.Name = m.Profile
	}
	return nil
}

// keptThresholds reads the thresholds of the study file d keeps, and the
// study's meshes on the platform the run was made on, as the study's
// parser left them (thresholds of meshes left out go with them). Nothing
// without a study file.
func keptThresholds(d *analysis.Dataset) ([]analysis.Threshold, []keptMesh, error) {
	if d.StudyFile == nil {
		return nil, nil, nil
	}
	var doc struct {
		Thresholds []analysis.ThresholdText `json:"thresholds"`
		Meshes     []keptMesh               `json:"meshes"`
	}
	where := d.Dir + "/" + results.StudyFile
	if err := yaml.Unmarshal(d.StudyFile, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(doc.Thresholds) == 0 {
		return nil, nil, nil
	}
	platform := d.Index.Provenance.Platform.Name
	left := map[string]bool{}
	var meshes []keptMesh
	for _, m := range doc.Meshes {
		if len(m.Platforms) > 0 && platform != "" && !slices.Contains(m.Platforms, platform) {
			left[m.Name] = true
			continue
		}
		meshes = append(meshes, m)
	}
	if len(meshes) == 0 {
		for _, m := range d.Meshes {
			meshes = append(meshes, keptMesh{Name: m, Profile: meshProfile(d, m)})
		}
	}
	var out []analysis.Threshold
	var errs []string
	for i, text := range doc.Thresholds {
		t, err := analysis.ParseThreshold(string(text))
		if err == nil {
			if _, ok := analysis.LookupThresholdMetric(t.Metric); !ok {
				err = fmt.Errorf("unknown metric %q; known: %s", t.Metric, strings.Join(analysis.ThresholdMetricNames(), ", "))
			}
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("%s: thresholds[%d]: %v", where, i, err))
		case !left[t.Mesh]:
			out = append(out, t)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.New(strings.Join(errs, "\n"))
	}
	return out, meshes, nil
}

// outcome is a threshold's outcome before it is judged.
func outcome(t analysis.Threshold) ThresholdOutcome {
	m, _ := analysis.LookupThresholdMetric(t.Metric)
	return ThresholdOutcome{Threshold: t.Text, Metric: t.Metric, Mesh: t.Mesh, Op: t.Op, Limit: t.Limit, Unit: m.Unit}
}

// judge judges one threshold for one mesh.
func (b *builder) judge(t analysis.Threshold, mesh string) ThresholdOutcome {
	o := outcome(t)
	o.Mesh = mesh
	f, why := b.thresholdFigure(t.Metric, mesh)
	if why != "" {
		o.Status, o.Why = ThresholdNotMeasured, why
		return o
	}
	o.Value, o.LowerBound = &f.v, f.bound
	if f.interval {
		o.Low, o.High, o.Level = &f.lo, &f.hi, &f.level
	}
	holds := t.Holds(f.v)
	switch {
	case f.censored || (f.upper && t.Above() == holds):
		o.Value, o.LowerBound = nil, false
		o.Status, o.Why = ThresholdNotMeasured, fmt.Sprintf("the figure, %s, is censored by timeouts (failed requests count at the timeout) and cannot tell whether it is %s %s",
			num(f.v), t.Op, strconv.FormatFloat(t.Limit, 'g', -1, 64))
		return o
	case f.upper:
		// At most the value: below a limit the value is below, above a
		// limit the value is not above.
		o.Met = holds
	case !f.bound:
		o.Met = holds
	case t.Above() && holds:
		// The figure is at least the bound, which is above the limit.
		o.Met = true
	case !t.Above() && !holds:
		// The figure is at least the bound, which is at the limit or above.
	default:
		o.Value, o.LowerBound = nil, false
		what := "the search stopped short and found a lower bound"
		if strings.HasSuffix(t.Metric, "_added_ms") {
			what = "timeouts censored the figure to a lower bound (failed requests count at the timeout)"
		}
		o.Status, o.Why = ThresholdNotMeasured, fmt.Sprintf("%s, %s, which cannot tell whether the figure is %s %s",
			what, num(f.v), t.Op, strconv.FormatFloat(t.Limit, 'g', -1, 64))
		return o
	}
	o.Status = ThresholdNotMet
	if o.Met {
		o.Status = ThresholdMet
	}
	return o
}

// thresholdFigure is a threshold metric's figure for a mesh, as the verdict
// computes it, or why there is none.
type thresholdFigure struct {
	v, lo, hi, level float64
	interval, bound  bool
	// upper marks a figure that is at most v (an added latency over a
	// baseline censored by timeouts); censored one that bounds nothing.
	upper, censored bool
}

func figureOf(e analysis.Estimate) thresholdFigure {
	f := thresholdFigure{v: e.Median, bound: e.MedianBound == analysis.AtLeast, upper: e.MedianBound == analysis.AtMost, censored: e.MedianBound == analysis.Unbounded}
	if e.Interval() {
		f.lo, f.hi, f.level, f.interval = e.Lo, e.Hi, e.Level, true
	}
	return f
}

func (b *builder) thresholdFigure(metric, m string) (thresholdFigure, string) {
	d := b.d
	if !slices.Contains(d.Meshes, m) {
		return thresholdFigure{}, "the results hold nothing of " + m + ": it never ran"
	}
	var at analysis.LoadConfig
	if len(d.Configs) > 0 {
		at = d.Representative()
	}
	switch metric {
	case "p50_added_ms", "p95_added_ms", "p99_added_ms":
		pm := map[string]analysis.Metric{"p50_added_ms": analysis.P50, "p95_added_ms": analysis.P95, "p99_added_ms": analysis.P99}[metric]
		switch {
		case len(d.Configs) == 0:
			return thresholdFigure{}, "the study ran no cells at a fixed load, only a capacity search"
		case d.Baseline == "":
			return thresholdFigure{}, "the results hold no baseline to add latency to"
		case m == d.Baseline:
			return thresholdFigure{}, m + " is the baseline the others are measured against"
		case b.closedAt(at):
			return thresholdFigure{}, "the verdict's load configuration is a closed loop, whose latency is its connections over its throughput (Little's law): it has no added latency, only throughput and latency"
		}
		o, ok := d.Overhead(m, at, pm)
		if !ok {
			return thresholdFigure{}, fmt.Sprintf("no cell of %s or of the baseline ran at %s", m, at.Label())
		}
		if !o.Delta.Valid() {
			return thresholdFigure{}, fmt.Sprintf("no round at %s has a usable cell of both %s and the baseline (failed or excluded cells, or too few requests)", at.Label(), m)
		}
		return figureOf(o.Delta), ""
	case "capacity_rps", "capacity_ratio":
		c, why := b.measuredCapacity(m)
		if why != "" {
			return thresholdFigure{}, why
		}
		if metric == "capacity_rps" {
			if connectionCeiling(d.Capacity) {
				return thresholdFigure{}, "the study's search found a connection ceiling, not a rate"
			}
			// The capacity the verdict quotes, its interval over the run's
			// deployments where it had several.
			e, _ := d.CapacityQuote(c)
			return figureOf(e), ""
		}
		ref := b.reference()
		if m == ref {
			return thresholdFigure{}, m + " is the reference the others are measured against"
		}
		rc, why := b.measuredCapacity(ref)
		switch {
		case why != "":
			return thresholdFigure{}, "no ratio to " + ref + ": " + why
		case rc.LowerBound:
			return thresholdFigure{}, "no ratio to " + ref + ": its capacity is a lower bound (the search stopped short)"
		}
		if r, _, ok := d.CapacityRatio(c, rc); ok {
			return figureOf(r), ""
		}
		return thresholdFigure{}, "no ratio to " + ref + ": both capacities are lower bounds"
	case "cpu_cores_per_1000rps", "memory_mib_per_1000rps", "usd_per_month", "usd_per_million_requests":
		if g := b.groupAt(m, at); g != nil && d.HasPart(m, analysis.PartDataPlane) {
			catalog, err := cost.LoadCatalog("")
			if err != nil {
				return thresholdFigure{}, "no price table: " + err.Error()
			}
			prices, err := cost.DefaultUnitPrices(catalog)
			if err != nil {
				return thresholdFigure{}, "no price table: " + err.Error()
			}
			cpu, mem, month, million := perRequestCosts(g, prices)
			e := map[string]analysis.Estimate{"cpu_cores_per_1000rps": cpu, "memory_mib_per_1000rps": mem, "usd_per_month": month, "usd_per_million_requests": million}[metric]
			if e.Valid() {
				return figureOf(e), ""
			}
		}
		if c := b.capacityOf(m); c != nil && metric == "cpu_cores_per_1000rps" {
			if v, lo, hi, level, ok := b.capacityDataPlaneCPUAt(c); ok {
				return thresholdFigure{v: v, lo: lo, hi: hi, level: level, interval: level > 0}, ""
			}
		}
		if len(d.Configs) == 0 {
			return thresholdFigure{}, "the study ran no cells at a fixed load, only a capacity search"
		}
		return thresholdFigure{}, fmt.Sprintf("no usable cell of %s measured its data plane at %s", m, at.Label())
	}
	return thresholdFigure{}, "meshbench does not judge " + metric
}

// groupAt is the mesh's group at a configuration when it holds a usable
// repetition.
func (b *builder) groupAt(m string, at analysis.LoadConfig) *analysis.Group {
	if len(b.d.Configs) == 0 {
		return nil
	}
	if g := b.d.Group(m, at); g != nil && len(g.Reps) > 0 {
		return g
	}
	return nil
}

// measuredCapacity is the mesh's capacity search when it found a
// capacity, or why there is none.
func (b *builder) measuredCapacity(m string) (*analysis.CapacityMesh, string) {
	if len(b.d.Capacity) == 0 {
		return nil, "the study ran no capacity search"
	}
	c := b.capacityOf(m)
	switch {
	case c == nil:
		return nil, "no capacity search of " + m + " ran"
	case c.Status == results.CapacityRunning:
		return nil, m + "'s capacity search did not finish"
	case c.Status != results.StatusOK:
		return nil, m + "'s capacity search failed: " + c.Reason
	case c.RPS <= 0:
		return nil, "no rate " + m + "'s search tried met the SLO"
	}
	return c, ""
}

// thresholdsSection is the report's table of the study's thresholds,
// after the verdict they are judged against.
func (b *builder) thresholdsSection(judged []ThresholdOutcome, err error) Section {
	s := Section{ID: "thresholds", Title: "Thresholds"}
	if err != nil {
		s.Blocks = append(s.Blocks, text("The study's thresholds could not be judged: "+err.Error()))
		return s
	}
	if len(judged) == 0 {
		return s
	}
	t := &Table{Header: []string{"Mesh", "Threshold", "Figure", "Outcome"}}
	for _, o := range judged {
		fig, out := o.figure(), o.Status
		if o.Status == ThresholdNotMeasured {
			fig, out = "—", "not measured ("+o.Why+"), which counts as not met"
		}
		t.Rows = append(t.Rows, []string{cmp.Or(o.Mesh, "—"), o.Metric + " " + o.Op + " " + strconv.FormatFloat(o.Limit, 'g', -1, 64), fig, out})
	}
	note := "Each threshold of the study file is judged against the verdict's estimate for each mesh it names (without a mesh, every mesh but the baseline), " +
		"its interval shown beside it"
	if len(b.d.Configs) > 0 {
		note += ", at the verdict's load configuration, " + b.d.Representative().Label()
	}
	t.Notes = []string{note + ". A figure the run could not measure is not measured, which counts as not met; " +
		"meshbench run and meshbench report exit 4 when any threshold is not met."}
	s.Blocks = append(s.Blocks, table(t))
	return s
}
