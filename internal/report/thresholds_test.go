package report

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/search"
)

// judged is Thresholds of d with the kept study file study and these
// thresholds.
func judged(t *testing.T, d *analysis.Dataset, study string, thresholds ...string) []ThresholdOutcome {
	t.Helper()
	d.StudyFile = []byte(resultstest.WithThresholds(study, thresholds...))
	out, err := Thresholds(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// outcomeOf finds the outcome of a threshold for a mesh.
func outcomeOf(t *testing.T, judged []ThresholdOutcome, threshold, mesh string) ThresholdOutcome {
	t.Helper()
	for _, o := range judged {
		if o.Threshold == threshold && o.Mesh == mesh {
			return o
		}
	}
	t.Fatalf("no outcome of %q for %s in %+v", threshold, mesh, judged)
	return ThresholdOutcome{}
}

// TestThresholdsJudgeTheVerdict: each threshold is judged against the
// verdict's estimate, for every mesh but the baseline or for the one it
// names; a figure the study did not measure is not measured, and not met.
func TestThresholdsJudgeTheVerdict(t *testing.T) {
	t.Parallel()
	d := loadOpenFixture(t)
	rep := d.Representative()
	p99, _ := d.Overhead(resultstest.Sidecar, rep, analysis.P99)
	p50, _ := d.Overhead(resultstest.Sidecar, rep, analysis.P50)
	if p50.Delta.Median < 10 {
		t.Fatalf("the fixture's sidecar adds %g ms at p50: the thresholds below assume more", p50.Delta.Median)
	}
	out := judged(t, d, resultstest.StudyYAML,
		"p99_added_ms < 1000",
		"istio-sidecar: p50_added_ms < 10",
		"istio-ambient: cpu_cores_per_1000rps <= 100",
		"capacity_ratio > 0.5",
	)
	var meshes []string
	for _, o := range out {
		meshes = append(meshes, o.Threshold+" "+o.Mesh)
	}
	want := []string{
		"p99_added_ms < 1000 " + resultstest.Ambient, "p99_added_ms < 1000 " + resultstest.Sidecar,
		"istio-sidecar: p50_added_ms < 10 " + resultstest.Sidecar,
		"istio-ambient: cpu_cores_per_1000rps <= 100 " + resultstest.Ambient,
		"capacity_ratio > 0.5 " + resultstest.Ambient, "capacity_ratio > 0.5 " + resultstest.Sidecar,
	}
	if !slices.Equal(meshes, want) {
		t.Fatalf("judged %q, want %q (file order, every mesh but the baseline)", meshes, want)
	}

	met := outcomeOf(t, out, "p99_added_ms < 1000", resultstest.Sidecar)
	if !met.Met || met.Status != ThresholdMet || met.Value == nil || *met.Value != p99.Delta.Median ||
		met.Low == nil || *met.Low != p99.Delta.Lo || met.High == nil || *met.High != p99.Delta.Hi || met.Level == nil || *met.Level != p99.Delta.Level {
		t.Errorf("p99 < 1000 for the sidecar: %+v, want met at the verdict's %+v", met, p99.Delta)
	}
	if met.Unit != "ms" || met.Op != "<" || met.Limit != 1000 || met.Metric != "p99_added_ms" {
		t.Errorf("p99 < 1000: %+v", met)
	}
	if line := met.Line(); !strings.HasPrefix(line, "threshold istio-sidecar: p99_added_ms < 1000: met, ") || !strings.Contains(line, " ms [") || !strings.Contains(line, "] at ") {
		t.Errorf("line %q", line)
	}

	notMet := outcomeOf(t, out, "istio-sidecar: p50_added_ms < 10", resultstest.Sidecar)
	if notMet.Met || notMet.Status != ThresholdNotMet || notMet.Value == nil || *notMet.Value != p50.Delta.Median {
		t.Errorf("p50 < 10 for the sidecar: %+v, want not met at %g", notMet, p50.Delta.Median)
	}
	if line := notMet.Line(); !strings.Contains(line, ": NOT met, ") {
		t.Errorf("line %q", line)
	}

	cpu := outcomeOf(t, out, "istio-ambient: cpu_cores_per_1000rps <= 100", resultstest.Ambient)
	if !cpu.Met || cpu.Unit != "cores" || cpu.Value == nil || *cpu.Value <= 0 {
		t.Errorf("ambient's data-plane CPU: %+v, want met", cpu)
	}

	// The fixture ran no capacity search: its calibration's closed-loop
	// capacities are no capacity at an SLO.
	none := outcomeOf(t, out, "capacity_ratio > 0.5", resultstest.Sidecar)
	if none.Met || none.Status != ThresholdNotMeasured || none.Value != nil || !strings.Contains(none.Why, "no capacity search") {
		t.Errorf("a capacity ratio without a search: %+v, want not measured", none)
	}
	if line := none.Line(); !strings.Contains(line, "not measured, which counts as not met: the study ran no capacity search") {
		t.Errorf("line %q", line)
	}

	err := ThresholdsNotMet(out)
	if !errors.Is(err, ErrThresholds) || !strings.Contains(err.Error(), "3 of 6 thresholds not met (2 of them not measured") {
		t.Errorf("ThresholdsNotMet: %v", err)
	}
	if err := ThresholdsNotMet(out[:2]); err != nil {
		t.Errorf("every threshold met: %v", err)
	}
	if err := ThresholdsNotMet(nil); err != nil {
		t.Errorf("no thresholds: %v", err)
	}
}

// TestThresholdsOfFailedCells: a mesh whose cells at the verdict's
// configuration all failed has no figure there, so its thresholds are
// not measured.
func TestThresholdsOfFailedCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1, Rate: openRate})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range ix.Cells {
		if c.Mesh == resultstest.Ambient {
			ix.Cells[i].Status, ix.Cells[i].Reason = results.StatusFailed, "mesh install failed"
		}
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := judged(t, d, resultstest.StudyYAML, "p99_added_ms < 1000", "usd_per_million_requests < 1")
	for _, th := range []string{"p99_added_ms < 1000", "usd_per_million_requests < 1"} {
		if o := outcomeOf(t, out, th, resultstest.Sidecar); !o.Met {
			t.Errorf("%s for the sidecar: %+v, want met", th, o)
		}
		if o := outcomeOf(t, out, th, resultstest.Ambient); o.Met || o.Status != ThresholdNotMeasured || !strings.Contains(o.Why, "usable cell") {
			t.Errorf("%s for the failed ambient: %+v, want not measured", th, o)
		}
	}
}

// capacityStudy is the capacity fixture's study under the names its
// results give the meshes.
const capacityStudy = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: capacity
workload: {graph: tiered}
meshes: [{profile: baseline}, {name: istio-sidecar, profile: sidecar}, {name: istio-ambient, profile: ambient}, {name: linkerd, profile: linkerd, platforms: [kubernetes]}]
load: {connections: 32, warmup: 2s}
search: {slo: {p99: 10ms, errors: 0.001}, start_rate: 50, trial: 3s, trials: 8}
`

// TestThresholdsOfACapacitySearch: capacity and its ratio come from the
// search, the data plane's CPU from its fitted lines; a failed search is
// not measured, and a lower bound decides only what a bound can.
func TestThresholdsOfACapacitySearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteCapacity(dir); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := judged(t, d, capacityStudy,
		"baseline: capacity_rps > 300",
		"istio-sidecar: capacity_ratio >= 0.5",
		"istio-sidecar: cpu_cores_per_1000rps < 4",
		"istio-sidecar: p99_added_ms < 3",
		"linkerd: capacity_ratio > 0.1",
	)
	if o := outcomeOf(t, out, "baseline: capacity_rps > 300", resultstest.Baseline); !o.Met || *o.Value != 400 || *o.Low != 0.97*400 || *o.High != 1.03*400 || *o.Level != search.Level {
		t.Errorf("baseline's capacity: %+v", o)
	}
	// The ratio's interval is the two searches' combined, in logs (one
	// deployment: nothing to add for the deployments').
	if o := outcomeOf(t, out, "istio-sidecar: capacity_ratio >= 0.5", resultstest.Sidecar); !o.Met || *o.Value != 0.5 || o.Low == nil || !near(*o.Low, 0.5*math.Exp(-math.Hypot(math.Log(1/0.97), math.Log(1.03)))) {
		t.Errorf("sidecar's capacity ratio: %+v, want met at 0.5 with its interval", o)
	}
	// 0.1 idle cores and 0.003 a req/s at 200 req/s: 3.5 cores per 1,000.
	if o := outcomeOf(t, out, "istio-sidecar: cpu_cores_per_1000rps < 4", resultstest.Sidecar); !o.Met || *o.Value < 3.49 || *o.Value > 3.51 {
		t.Errorf("sidecar's data-plane CPU at its capacity: %+v", o)
	}
	if o := outcomeOf(t, out, "istio-sidecar: p99_added_ms < 3", resultstest.Sidecar); o.Status != ThresholdNotMeasured || !strings.Contains(o.Why, "no cells at a fixed load") {
		t.Errorf("added latency of a search alone: %+v", o)
	}
	for _, o := range out {
		if o.Mesh == "linkerd" {
			t.Errorf("linkerd runs on kubernetes only, and these results are the lab's: %+v", o)
		}
	}

	// A failed search, and one cut short.
	for _, c := range d.Capacity {
		switch c.Mesh {
		case resultstest.Ambient:
			c.Status, c.Reason = results.StatusFailed, "install failed"
		case resultstest.Sidecar:
			c.Kind, c.LowerBound, c.CILow, c.CIHigh = search.FormBound, true, 0, 0
		}
	}
	out = judged(t, d, capacityStudy, "capacity_ratio > 0.4", "capacity_ratio < 0.4", "capacity_ratio < 0.6")
	for _, tc := range []struct {
		threshold, mesh, status, why string
	}{
		{"capacity_ratio > 0.4", resultstest.Sidecar, ThresholdMet, ""},
		{"capacity_ratio < 0.4", resultstest.Sidecar, ThresholdNotMet, ""},
		{"capacity_ratio < 0.6", resultstest.Sidecar, ThresholdNotMeasured, "lower bound"},
		{"capacity_ratio > 0.4", resultstest.Ambient, ThresholdNotMeasured, "search failed: install failed"},
	} {
		o := outcomeOf(t, out, tc.threshold, tc.mesh)
		if o.Status != tc.status || !strings.Contains(o.Why, tc.why) || o.Met != (tc.status == ThresholdMet) {
			t.Errorf("%s for %s: %+v, want %s (%s)", tc.threshold, tc.mesh, o, tc.status, tc.why)
		}
	}
	// At least the bound over the baseline's upper end, 1.03 × 400.
	if o := outcomeOf(t, out, "capacity_ratio > 0.4", resultstest.Sidecar); !o.LowerBound || !strings.Contains(o.Line(), "≥ 0.485×") {
		t.Errorf("a met lower bound: %+v, line %q", o, o.Line())
	}
}

// TestThresholdsInTheReport: the document holds the judged thresholds,
// as JSON's "thresholds" and as a section after the verdict; a kept study
// file whose thresholds do not read is an error, not a pass.
func TestThresholdsInTheReport(t *testing.T) {
	t.Parallel()
	d := loadOpenFixture(t)
	d.StudyFile = []byte(resultstest.WithThresholds(resultstest.StudyYAML, "p99_added_ms < 1000"))
	doc := Build(d)
	if len(doc.Sections) < 2 || doc.Sections[0].ID != "verdict" || doc.Sections[1].ID != "thresholds" {
		t.Errorf("sections do not begin with the verdict and the thresholds")
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Thresholds []map[string]any `json:"thresholds"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Thresholds) != 2 {
		t.Fatalf("JSON thresholds %v, want one per mesh but the baseline", got.Thresholds)
	}
	for _, k := range []string{"threshold", "metric", "mesh", "op", "limit", "unit", "value", "low", "high", "level", "met", "status"} {
		if _, ok := got.Thresholds[0][k]; !ok {
			t.Errorf("JSON threshold lacks %q: %v", k, got.Thresholds[0])
		}
	}

	// Without thresholds, no section and no array: the report is as it was.
	d.StudyFile = []byte(resultstest.StudyYAML)
	doc = Build(d)
	if len(doc.Thresholds) != 0 || slices.ContainsFunc(doc.Sections, func(s Section) bool { return s.ID == "thresholds" }) {
		t.Errorf("a study without thresholds has a thresholds section")
	}

	d.StudyFile = []byte(resultstest.WithThresholds(resultstest.StudyYAML, "p99_added_ms < 1000", "latency < 5", "p99 < 5ms"))
	if _, err := Thresholds(d); err == nil || !strings.Contains(err.Error(), `thresholds[1]: unknown metric "latency"`) || !strings.Contains(err.Error(), "thresholds[2]") {
		t.Errorf("unreadable thresholds: %v", err)
	}
}

// TestEveryThresholdMetricIsJudged: each metric of the table has its
// figure here, so that the table cannot name one the report ignores.
func TestEveryThresholdMetricIsJudged(t *testing.T) {
	t.Parallel()
	b := &builder{d: loadFixture(t)}
	for _, m := range analysis.ThresholdMetrics {
		if _, why := b.thresholdFigure(m.Name, resultstest.Sidecar); strings.Contains(why, "does not judge") {
			t.Errorf("%s: %s", m.Name, why)
		}
	}
}
