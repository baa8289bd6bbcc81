package study

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results"
)

// A mesh that fails 40% of its requests fast is excluded as failed, with
// its errors in the reason, not shown faster than the baseline; a mesh
// within max_error_rate stays in.
func TestFastFailingMeshIsExcludedNotFaster(t *testing.T) {
	t.Parallel()
	const src = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: failing
workload: {graph: small-graph.yaml}
meshes: [{profile: baseline}, {profile: sidecar}, {profile: ambient}]
load: {rate: 100, duration: 10s}
repetitions: 2
`
	f := newFake()
	f.latency["baseline"], f.latency["sidecar"], f.latency["ambient"] = time.Millisecond, 2*time.Millisecond, 2*time.Millisecond
	f.failing = map[string]float64{"ambient": 0.4, "sidecar": 0.0005}
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, src, f, dir, nil))
	for _, s := range ix.Cells {
		switch s.Mesh {
		case "ambient":
			if s.Status != results.StatusFailed || !strings.Contains(s.Reason, "4000 of 10000 requests failed (40%, over max_error_rate 0.1%): HTTP 503 x4000") {
				t.Errorf("ambient cell %s: %s %q; want failed for its errors", s.ID, s.Status, s.Reason)
			}
		default:
			if s.Status != results.StatusOK {
				t.Errorf("%s cell %s: %s %q; want ok", s.Mesh, s.ID, s.Status, s.Reason)
			}
		}
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Excluded) != 2 {
		t.Fatalf("%d cells excluded, want ambient's 2", len(d.Excluded))
	}
	for _, e := range d.Excluded {
		if e.Summary.Mesh != "ambient" || e.Kind != results.StatusFailed || !strings.Contains(e.Reason, "over max_error_rate") {
			t.Errorf("excluded %s (%s): %s %q", e.Summary.ID, e.Summary.Mesh, e.Kind, e.Reason)
		}
	}
	cfg := d.Representative()
	if g := d.Group("ambient", cfg); g != nil && len(g.Reps) > 0 {
		t.Errorf("ambient has %d usable repetitions; its p50 %v would be shown", len(g.Reps), g.Values(analysis.P50))
	}
	// The sidecar's 0.05% of failures is within the limit: kept, its
	// latency that of the requests that succeeded.
	if g := d.Group("sidecar", cfg); g == nil || len(g.Reps) != 2 || g.Estimate(analysis.P50).Median < 1.9 {
		t.Errorf("sidecar group %+v; want 2 repetitions at p50 2ms", g)
	}
}

// A cell during which a proxy restarted is excluded with the cause, its
// figures whatever they were; the mesh's other cells stay in.
func TestCellWithProxyRestartIsExcluded(t *testing.T) {
	t.Parallel()
	const src = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: restart
workload: {graph: small-graph.yaml}
meshes: [{profile: baseline}, {profile: sidecar}]
load: {rate: 100, duration: 10s}
repetitions: 2
order: {shuffle: false}
`
	f := newFake()
	const fault = "proxy restarted: ns-1/front-0/istio-proxy (restarts and failed exits: 0 before the measurement, 1 after)"
	var hit string
	f.faults = func(profile string, n int) []string {
		if profile == "sidecar" && hit == "" {
			hit = profile
			return []string{fault}
		}
		return nil
	}
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, src, f, dir, nil))
	var failed int
	for _, s := range ix.Cells {
		if s.Status == results.StatusFailed {
			failed++
			if s.Mesh != "sidecar" || s.Reason != "the data plane did not hold: "+fault {
				t.Errorf("cell %s (%s) failed: %q", s.ID, s.Mesh, s.Reason)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d cells failed, want the one with the restart", failed)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Excluded) != 1 || !strings.Contains(d.Excluded[0].Reason, "proxy restarted") {
		t.Fatalf("excluded %+v; want the sidecar cell, for its proxy restart", d.Excluded)
	}
	if g := d.Group("sidecar", d.Representative()); g == nil || len(g.Reps) != 1 {
		t.Errorf("sidecar keeps %+v; want its other repetition", g)
	}
}

// A measurement after which the load side could not check the mesh for a
// limit of its own (its pod out of local ports) is distorted, not a data
// plane that failed, and a search takes it as no evidence.
func TestCellAtTheLoadSidesLimitIsDistortedNotFailed(t *testing.T) {
	t.Parallel()
	const src = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: limit
workload: {graph: small-graph.yaml}
meshes: [{profile: baseline}, {profile: sidecar}]
load: {rate: 100, duration: 10s}
repetitions: 2
order: {shuffle: false}
`
	f := newFake()
	const limit = "the mesh could not be verified after the measurement: peer-identity (1 of 2 fail: ns-1/load -> ns-1/front: no answer: the calling pod had no free local port (EADDRNOTAVAIL))"
	var hit bool
	f.limits = func(profile string, n int) []string {
		if profile == "sidecar" && !hit {
			hit = true
			return []string{limit}
		}
		return nil
	}
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, src, f, dir, nil))
	var distorted int
	for _, s := range ix.Cells {
		switch s.Status {
		case results.StatusFailed:
			t.Errorf("cell %s (%s) failed: %q; the load side's limit is not the data plane's", s.ID, s.Mesh, s.Reason)
		case results.StatusDistorted:
			distorted++
			if s.Mesh != "sidecar" || s.Reason != atOwnLimit+limit {
				t.Errorf("cell %s (%s) distorted: %q", s.ID, s.Mesh, s.Reason)
			}
			cell, err := results.ReadCell(dir, s)
			if err != nil {
				t.Fatal(err)
			}
			if o := trialOutcome(cell, []load.Result{{Requests: 1000, AchievedRate: 100}}); !o.Saturated || o.Unmeasured || !strings.Contains(o.Reason, "EADDRNOTAVAIL") {
				t.Errorf("as a trial: %+v; want the generator's limit, no evidence", o)
			}
		}
	}
	if distorted != 1 {
		t.Fatalf("%d cells distorted, want the one at the load side's limit", distorted)
	}
}
