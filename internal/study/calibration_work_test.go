package study

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results"
)

func TestWorkPerRequest(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(workStudy), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	// front 30 + mid 6 + back 4 x 1.5 (front's call, and mid v2's in
	// half of mid's requests).
	if got := workPerRequest(s.Graph, nil); got != 42*time.Millisecond {
		t.Errorf("work per request %s, want 42ms", got)
	}
	// A replica override gives every version of the service the same count.
	if got := workPerRequest(s.Graph, map[string]int{"mid": 4}); got != 42*time.Millisecond {
		t.Errorf("work per request with mid at 4 replicas %s, want 42ms", got)
	}
	// Bookinfo as LiveWyer's preset splits it: productpage 29, details 3,
	// reviews 8, and ratings 6 from two reviews versions of three.
	p, _, err := Preset("livewyer-bookinfo", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	if got := workPerRequest(p.Graph, nil); got != 44*time.Millisecond {
		t.Errorf("bookinfo's work per request %s, want 44ms", got)
	}
}

// workStudy is a closed-loop study whose app's cost is calibrated from
// LiveWyer's published throughput at 32 connections.
const workStudy = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: work
platform:
  type: lab
  nodes:
  - {name: app, role: app, cpus: "1"}
  - {name: load, role: load, cpus: "0"}
workload:
  graph: work-graph.yaml
  cpu_work: {front: 30ms, mid: 6ms, back: 4ms}
meshes: [{profile: baseline}, {profile: ambient}, {profile: sidecar}]
load: {connections: 32, requests: 30000, keepalive: false}
repetitions: 1
scaling: {measure: 20s, warmup: 5s, calibrate_work: true}
published:
- {metric: qps, mesh: baseline, value: 143.8, source: "test table"}
- {metric: qps, mesh: ambient, value: 130.7, source: "test table"}
- {metric: qps, mesh: sidecar, value: 124.5, source: "test table"}
`

// TestRunCalibratesWork runs on a fake whose closed loop is CPU-bound on
// one app CPU: the app's own 5 ms, its configured work, and each mesh's
// proxies (sidecar 9 ms, ambient 4 ms per request, ratio 2.25, where the
// study's is 1.55). The calibration must scale the work so that the lab's
// shares straddle the study's, their geometric mean ratio to the study's
// being 1; deploy the scaled work; measure the capacities again with it;
// record all of it; and a resumed run must deploy the same work.
func TestRunCalibratesWork(t *testing.T) {
	t.Parallel()
	newCostFake := func() *fakePlatform {
		f := newFake()
		f.appOwn = 5 * time.Millisecond
		f.proxyCost = map[string]time.Duration{"baseline": 0, "ambient": 4 * time.Millisecond, "sidecar": 9 * time.Millisecond}
		return f
	}
	f := newCostFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.onMeasure = func(n int) error {
		if n == 8 { // 3 calibrations, 3 again, the first cell, then stop
			cancel()
			return context.Canceled
		}
		return nil
	}
	dir := t.TempDir()
	var progress bytes.Buffer
	o := runOptions(t, workStudy, f, dir, &progress)
	if _, err := Run(ctx, o); err == nil {
		t.Fatal("the interrupted run succeeded")
	}
	// Calibration planned a study of its own: the one given keeps its work.
	if got := workPerRequest(o.Study.Graph, nil); got != 42*time.Millisecond {
		t.Errorf("the given study's graph now burns %s a request, want the configured 42ms", got)
	}
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	sc := ix.Provenance.Scaling
	if sc == nil || sc.Work == nil {
		t.Fatalf("no work calibration recorded: %+v", sc)
	}
	w := sc.Work
	if w.AppCPUs != 1 || w.ConfiguredMs != 42 || math.Abs(w.AppMsBefore-47) > 0.01 {
		t.Errorf("calibration %+v: want 1 app CPU, 42 ms configured, the app at 47 ms", w)
	}
	for m, want := range map[string]float64{"sidecar": 9.0 / 47, "ambient": 4.0 / 47} {
		if math.Abs(w.SharesBefore[m]-want) > 1e-3 {
			t.Errorf("%s's share before %g, want %g", m, w.SharesBefore[m], want)
		}
	}
	if math.Abs(w.StudyShares["sidecar"]-0.155) > 1e-3 || math.Abs(w.StudyShares["ambient"]-0.1002) > 1e-3 {
		t.Errorf("study shares %v, want sidecar 0.155 and ambient 0.1002 (143.8/124.5 - 1, 143.8/130.7 - 1)", w.StudyShares)
	}
	// The shares measured after straddle the study's, in balance.
	rs := w.SharesAfter["sidecar"] / w.StudyShares["sidecar"]
	ra := w.SharesAfter["ambient"] / w.StudyShares["ambient"]
	if rs <= 1 || ra >= 1 || math.Abs(math.Sqrt(rs*ra)-1) > 0.01 {
		t.Errorf("shares after %v against the study's %v: ratios %.3f and %.3f, want one above and one below 1, geometric mean 1", w.SharesAfter, w.StudyShares, rs, ra)
	}
	// Deployed: the configured work, then the scaled work.
	if len(f.deployed) != 2 || f.deployed[0] != 42*time.Millisecond {
		t.Fatalf("deployments' work %v, want 42ms then the scaled work", f.deployed)
	}
	scaled := f.deployed[1]
	if d := math.Abs(scaled.Seconds()*1000 - 42*w.Scale); d > 0.01 {
		t.Errorf("scaled work %s, want 42 ms x %g", scaled, w.Scale)
	}
	if math.Abs(w.WorkMs["front"]-30*w.Scale) > 0.01 {
		t.Errorf("front's work %g ms, want 30 x %g", w.WorkMs["front"], w.Scale)
	}
	// The load scales from the capacities measured with the new work.
	if want := 1 / (f.appOwn + scaled + 9*time.Millisecond).Seconds(); math.Abs(sc.Capacities["sidecar"]-want) > 0.1 {
		t.Errorf("sidecar's capacity %g, want %g (measured with the scaled work)", sc.Capacities["sidecar"], want)
	}
	if !strings.Contains(sc.Note, "app's cost calibrated") || !strings.Contains(progress.String(), "calibrated the app's cost") {
		t.Errorf("note %q / progress %q do not say the app's cost was calibrated", sc.Note, progress.String())
	}

	// Resuming deploys the scaled work without calibrating again.
	f2 := newCostFake()
	st, src, err := LoadRun(dir, PlatformOverride{}, false)
	if err != nil {
		t.Fatal(err)
	}
	final := run(t, Options{Study: st, Source: src, Open: f2.open, Dir: dir, Resume: true})
	if !final.Complete || f2.measures != 2 {
		t.Fatalf("resumed: complete %v after %d measurements, want the 2 cells left", final.Complete, f2.measures)
	}
	if len(f2.deployed) != 1 || f2.deployed[0] != scaled {
		t.Errorf("the resumed run deployed work %v, want %s", f2.deployed, scaled)
	}
}

func TestCalibrateWorkErrors(t *testing.T) {
	t.Parallel()
	study := map[string]float64{"sidecar": 0.155}
	caps := map[string]float64{"baseline": 100, "sidecar": 80}
	for _, tc := range []struct {
		name       string
		caps       map[string]float64
		configured time.Duration
		want       string
	}{
		{"no work", caps, 0, "give workload.cpu_work"},
		{"no baseline", map[string]float64{"sidecar": 80}, 10 * time.Millisecond, "baseline's capacity"},
		{"proxies free", map[string]float64{"baseline": 100, "sidecar": 100}, 10 * time.Millisecond, "measurable"},
		// 10 ms per request, 9 of it configured: the proxies' 25% share
		// asks for 16 ms of app, so the work grows by 6 ms; 200 req/s
		// (5 ms, all of it the app's own) with the proxies at 1% would ask
		// for less than the app's own cost.
		{"app too costly already", map[string]float64{"baseline": 200, "sidecar": 198}, 1 * time.Millisecond, "lower workload.cpu_work"},
	} {
		if _, err := calibrateWork(study, tc.caps, "baseline", 1, tc.configured); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	w, err := calibrateWork(study, map[string]float64{"baseline": 100, "sidecar": 80}, "baseline", 1, 9*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// 10 ms of app, the sidecar 2.5 ms (25%): the study's 15.5% asks for
	// 16.13 ms of app, 6.13 ms more work than the configured 9.
	if math.Abs(w.TargetAppMs-16.129) > 0.01 || math.Abs(w.Scale-(9+6.129)/9) > 0.001 {
		t.Errorf("target %g ms, scale %g; want 16.13 ms and %g", w.TargetAppMs, w.Scale, (9+6.129)/9)
	}
}

func TestValidateCalibrateWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, from, to, want string }{
		{"no work to scale", "  cpu_work: {front: 30ms, mid: 6ms, back: 4ms}\n", "", "workload.cpu_work"},
		{"no baseline throughput", "{metric: qps, mesh: baseline, value: 143.8", "{metric: p50, mesh: baseline, value: 143.8", "no published qps of a baseline"},
		{"baseline alone", "- {metric: qps, mesh: ambient, value: 130.7, source: \"test table\"}\n- {metric: qps, mesh: sidecar, value: 124.5, source: \"test table\"}\n", "", "beside the baseline"},
	} {
		src := strings.Replace(workStudy, tc.from, tc.to, 1)
		if src == workStudy {
			t.Fatalf("%s: %q not in the study", tc.name, tc.from)
		}
		_, err := Parse([]byte(src), "testdata")
		if err == nil || !strings.Contains(err.Error(), "scaling.calibrate_work") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming scaling.calibrate_work and saying %q", tc.name, err, tc.want)
		}
	}
}
