package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/search"
)

// deploymentFactors scatter a calibrated closed-loop capacity over six
// deployments by about 10% (their logs' standard deviation, logSD).
var deploymentFactors = []float64{1, 1.12, 0.9, 1.05, 0.86, 1.1}

// The normal and Student's t (5 degrees of freedom) quantiles of a
// two-sided 95% interval.
const z95, t95df5 = 1.959964, 2.570582

func logSD(xs []float64) float64 {
	var m, ss float64
	for _, x := range xs {
		m += math.Log(x) / float64(len(xs))
	}
	for _, x := range xs {
		ss += (math.Log(x) - m) * (math.Log(x) - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// loadCapacityDeployments is the capacity fixture run over one deployment
// per factor, as the runner records them: the first calibrates every
// mesh, the later ones only the slowest, the sidecar (everyMesh: every
// mesh in every deployment), each mesh's closed-loop capacity scaled by
// the deployment's factor.
func loadCapacityDeployments(t *testing.T, factors []float64, everyMesh bool) *analysis.Dataset {
	t.Helper()
	dir := t.TempDir()
	ix, err := resultstest.WriteCapacity(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range factors {
		caps := map[string]float64{}
		for _, m := range resultstest.CapacityMeshes {
			if i == 0 || everyMesh || m.Name == resultstest.Sidecar {
				caps[m.Name] = 1.4 * m.Capacity * f
			}
		}
		ix.Provenance.Deployments = append(ix.Provenance.Deployments, results.Deployment{Index: i + 1, Start: resultstest.Start.Add(time.Duration(i) * time.Minute),
			Scaling: &results.Scaling{Mode: results.ScaleCalibrated, Capacities: caps, Reference: resultstest.Sidecar, Fraction: 0.5, Factor: 1}})
	}
	ix.Provenance.Scaling = ix.Provenance.Deployments[0].Scaling
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The fixture's searches' own intervals are [0.97, 1.03] × the capacity
// at 95%: their log-scale standard errors below and above.
var searchBelow, searchAbove = math.Log(1/0.97) / z95, math.Log(1.03) / z95

// checkSide checks a log-scale half-width against the root of the search's
// and the deployments' variances' sum: at least the normal quantile times
// it, at most Student's t on the deployments' 5 degrees of freedom times
// it.
func checkSide(t *testing.T, what string, got, se, sd float64) {
	t.Helper()
	w := math.Hypot(se, sd)
	if got < z95*w-1e-9 || got > t95df5*w+1e-9 {
		t.Errorf("%s: log half-width %.4f, want between %.4f and %.4f (the search's %.4f and the deployments' %.4f in squares)", what, got, z95*w, t95df5*w, se, sd)
	}
}

// TestCapacityIntervalOverDeployments: with six deployments whose
// calibrated capacities scatter by 10%, each capacity's interval is the
// search's own widened by that scatter (the sidecar's, which alone every
// deployment calibrates, standing for the others'), and contains it; the
// ratio to the baseline has an interval, wider than the two searches'
// alone; the capacity table and the JSON say what each interval spans.
func TestCapacityIntervalOverDeployments(t *testing.T) {
	t.Parallel()
	d := loadCapacityDeployments(t, deploymentFactors, false)
	doc := Build(d)
	sd := logSD(deploymentFactors)
	for _, m := range resultstest.CapacityMeshes {
		f := findVerdictMesh(t, doc.Verdict, m.Name).Throughput
		if f == nil || f.Value != m.Capacity || f.Level != analysis.Nominal || f.Low >= 0.97*m.Capacity || f.High <= 1.03*m.Capacity {
			t.Errorf("%s throughput %+v, want %v with a 95%% interval wider than the search's [%v, %v]", m.Name, f, m.Capacity, 0.97*m.Capacity, 1.03*m.Capacity)
			continue
		}
		checkSide(t, m.Name+" below", math.Log(f.Value/f.Low), searchBelow, sd)
		checkSide(t, m.Name+" above", math.Log(f.High/f.Value), searchAbove, sd)
	}
	// No deployment but the first calibrated both the sidecar and the
	// baseline: the two scatters add, as though independent.
	r := findVerdictMesh(t, doc.Verdict, resultstest.Sidecar).ThroughputRatio
	if r == nil || !near(r.Value, 0.5) || r.Level != analysis.Nominal || r.Bound != "" {
		t.Fatalf("sidecar's ratio %+v, want 0.5 with a 95%% interval", r)
	}
	checkSide(t, "ratio below", math.Log(r.Value/r.Low), math.Hypot(searchBelow, searchAbove), math.Sqrt2*sd)
	checkSide(t, "ratio above", math.Log(r.High/r.Value), math.Hypot(searchAbove, searchBelow), math.Sqrt2*sd)
	if !strings.Contains(timesText(r), "[") {
		t.Errorf("the ratio reads %q, without its interval", timesText(r))
	}

	caps := findTable(capacitySection(t, doc), "Capacity (req/s)")
	if caps == nil || len(caps.Header) < 4 || caps.Header[3] != "Interval over" {
		t.Fatalf("capacity table %+v, want an Interval over column", caps)
	}
	for i, m := range resultstest.CapacityMeshes {
		span := caps.Rows[i][3]
		if !strings.HasPrefix(span, "6 deployments: the search's own interval "+num(0.97*m.Capacity)+" to "+num(1.03*m.Capacity)) {
			t.Errorf("%s spans %q, want 6 deployments and the search's own interval", m.Name, span)
		}
		if borrowed := strings.Contains(span, "sidecar's calibrated"); borrowed != (m.Name != resultstest.Sidecar) {
			t.Errorf("%s spans %q: only the meshes calibrated once borrow the sidecar's scatter", m.Name, span)
		}
	}
	if notes := strings.Join(doc.Sections[0].Blocks[0].Table.Notes, " "); !strings.Contains(notes, "Each interval spans the run's 6 deployments") {
		t.Errorf("the verdict does not say what its capacities' intervals span: %s", notes)
	}

	var out struct {
		Verdict struct {
			Meshes []struct {
				Mesh       string         `json:"mesh"`
				Throughput map[string]any `json:"throughput"`
				Ratio      map[string]any `json:"throughput_ratio"`
			} `json:"meshes"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(reportJSON(t, doc), &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Verdict.Meshes {
		if got := m.Throughput["interval_over"]; got != "6 deployments" {
			t.Errorf("%s: JSON throughput %v, want interval_over 6 deployments", m.Mesh, m.Throughput)
		}
		if m.Mesh != resultstest.Baseline && m.Ratio["interval_over"] != "6 deployments" {
			t.Errorf("%s: JSON ratio %v, want interval_over 6 deployments", m.Mesh, m.Ratio)
		}
	}
}

// TestCapacityRatioPairedByDeployment: where every deployment calibrated
// every mesh and each deployment moved them all alike, each capacity's
// interval still counts the deployments' scatter, but their ratio's does
// not: paired by deployment, it is the two searches' intervals combined.
func TestCapacityRatioPairedByDeployment(t *testing.T) {
	t.Parallel()
	d := loadCapacityDeployments(t, deploymentFactors, true)
	v := Build(d).Verdict
	base := findVerdictMesh(t, v, resultstest.Baseline).Throughput
	checkSide(t, "baseline below", math.Log(base.Value/base.Low), searchBelow, logSD(deploymentFactors))
	r := findVerdictMesh(t, v, resultstest.Sidecar).ThroughputRatio
	if r == nil || r.Level != analysis.Nominal {
		t.Fatalf("sidecar's ratio %+v, want a 95%% interval", r)
	}
	lo, hi := 0.5*math.Exp(-math.Hypot(math.Log(1/0.97), math.Log(1.03))), 0.5*math.Exp(math.Hypot(math.Log(1.03), math.Log(1/0.97)))
	if !near(r.Low, lo) || !near(r.High, hi) {
		t.Errorf("sidecar's ratio [%v, %v], want the searches' alone, [%v, %v]", r.Low, r.High, lo, hi)
	}
}

// TestCapacityIntervalWithinOneSearch: a run of one deployment quotes the
// search's own interval and says it is within one search; the ratio of
// two capacities still has an interval, the two searches' combined; and a
// bound over an estimate is a bound of the ratio, at least the bound over
// the estimate's upper end, not a point.
func TestCapacityIntervalWithinOneSearch(t *testing.T) {
	t.Parallel()
	d := loadCapacityFixture(t)
	doc := Build(d)
	caps := findTable(capacitySection(t, doc), "Capacity (req/s)")
	for i, m := range resultstest.CapacityMeshes {
		if row := caps.Rows[i]; row[2] != num(0.97*m.Capacity)+" to "+num(1.03*m.Capacity) || !strings.HasPrefix(row[3], "within one search: the run had one deployment") {
			t.Errorf("%s row %q, want the search's own interval, within one search", m.Name, row)
		}
	}
	if notes := strings.Join(doc.Sections[0].Blocks[0].Table.Notes, " "); !strings.Contains(notes, "Each interval is within one search") {
		t.Errorf("the verdict does not say its intervals are within one search: %s", notes)
	}
	r := findVerdictMesh(t, doc.Verdict, resultstest.Sidecar).ThroughputRatio
	lo, hi := 0.5*math.Exp(-math.Hypot(math.Log(1/0.97), math.Log(1.03))), 0.5*math.Exp(math.Hypot(math.Log(1.03), math.Log(1/0.97)))
	if r == nil || r.Level != analysis.Nominal || !near(r.Low, lo) || !near(r.High, hi) {
		t.Errorf("sidecar's ratio %+v, want 0.5 [%v, %v] at 95%%", r, lo, hi)
	}

	for _, c := range d.Capacity {
		if c.Mesh == resultstest.Sidecar {
			c.Kind, c.LowerBound, c.CILow, c.CIHigh, c.Level = search.FormBound, true, 0, 0, 0
		}
	}
	v := Build(d).Verdict
	r = findVerdictMesh(t, v, resultstest.Sidecar).ThroughputRatio
	if r == nil || r.Bound != BoundLower || r.Level != 0 || !near(r.Value, 0.5/1.03) || timesText(r) != "≥ "+num(0.5/1.03)+"×" {
		t.Errorf("a bound's ratio %+v (%s), want at least %v", r, timesText(r), 0.5/1.03)
	}
}
