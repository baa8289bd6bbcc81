package study

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// studySource is a whole study file for the run tests: 3 meshes x 2
// connection counts x 2 repetitions = 12 cells.
const studySource = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: runtest
workload: {graph: small-graph.yaml}
meshes: [{profile: baseline}, {profile: sidecar}, {profile: ambient}]
load: {rate: 100, duration: 10s, warmup: 2s}
sweeps:
- {param: connections, values: [16, 32]}
repetitions: 2
`

func runOptions(t *testing.T, src string, f *fakePlatform, dir string, progress *bytes.Buffer) Options {
	t.Helper()
	s, err := Parse([]byte(src), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Study: s, Source: []byte(src), Open: f.open, Dir: dir, Version: "v0.0.0-test"}
	if progress != nil {
		o.Progress = progress
	}
	return o
}

func run(t *testing.T, o Options) *results.Index {
	t.Helper()
	ix, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ix
}

func TestRunWritesResults(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.latency["sidecar"] = 3e6
	dir := filepath.Join(t.TempDir(), "out")
	var progress bytes.Buffer
	ix := run(t, runOptions(t, studySource, f, dir, &progress))

	got, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Complete || got.Planned != 12 || len(got.Cells) != 12 || got.End.IsZero() || len(ix.Cells) != 12 {
		t.Fatalf("index complete=%v planned=%d cells=%d end=%v", got.Complete, got.Planned, len(got.Cells), got.End)
	}
	p := got.Provenance
	if p.MeshbenchVersion != "v0.0.0-test" || p.Platform.Kernel != "6.1.0-test" || p.Scaling == nil || p.Scaling.Mode != results.ScaleNone || len(p.Cluster.Nodes) != 4 {
		t.Errorf("provenance %+v", p)
	}
	if h := p.EnvoyConfigHashes["sidecar"]; h != "0123456789abcdef" {
		t.Errorf("envoy config hashes %v", p.EnvoyConfigHashes)
	}
	if got.StudyHash != ix.StudyHash || len(got.StudyHash) != 64 {
		t.Errorf("study hash %q", got.StudyHash)
	}
	if src := readFile(t, filepath.Join(dir, results.StudyFile)); string(src) != studySource {
		t.Errorf("study.yaml is not the study file as written:\n%s", src)
	}
	if g := readFile(t, filepath.Join(dir, results.GraphFile)); !bytes.Contains(g, []byte("name: small")) {
		t.Errorf("graph.yaml:\n%s", g)
	}
	if log := readFile(t, filepath.Join(dir, results.LogFile)); !bytes.Contains(log, []byte("installing mesh")) {
		t.Errorf("run log lacks the run's steps:\n%s", log)
	}
	for _, s := range got.Cells {
		if s.Status != results.StatusOK || s.AchievedRate != 1000 || s.Requests != 10000 || len(s.Verification) != 2 || s.Profile != s.Mesh {
			t.Fatalf("cell %s: %+v", s.ID, s)
		}
		wantP50 := 1.0
		if s.Mesh == "sidecar" {
			wantP50 = 3.0
		}
		if s.LatencyMs.P50 < wantP50*0.99 || s.LatencyMs.P50 > wantP50*1.01 {
			t.Errorf("cell %s p50 %gms, want %gms", s.ID, s.LatencyMs.P50, wantP50)
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		if c.Merged == nil || c.Merged.Latency.Count() != s.Requests || len(c.Resources) != 1 || c.MeshSpec.Profile != s.Mesh {
			t.Fatalf("cell file %s does not hold the measurement", s.File)
		}
	}
	// Two deployments (one a round, the default), each on the platform
	// brought up afresh with the workload deployed; an installation at
	// every change of mesh or deployment; the platform torn down after
	// each.
	installs := 0
	for i, s := range got.Cells {
		if i == 0 || s.Mesh != got.Cells[i-1].Mesh || s.Deployment != got.Cells[i-1].Deployment {
			installs++
		}
	}
	if f.count("deploy") != 2 || f.count("install") != installs || f.count("remove") != installs-2 || f.count("down") != 2 || f.count("up") != 2 {
		t.Errorf("%d installations; calls %q", installs, f.calls)
	}
	for _, want := range []string{"[1/12]", "elapsed", "left ~", "done: 12 cells"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

func TestRunMarksDistortedCells(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.distorted["sidecar"] = true
	ix := run(t, runOptions(t, studySource, f, t.TempDir(), nil))
	for _, s := range ix.Cells {
		want := results.StatusOK
		if s.Mesh == "sidecar" {
			want = results.StatusDistorted
		}
		if s.Status != want {
			t.Errorf("cell %s status %s, want %s", s.ID, s.Status, want)
		}
		if want == results.StatusDistorted && !strings.Contains(s.Reason, "sent 80% of the target rate") {
			t.Errorf("cell %s reason %q does not say why", s.ID, s.Reason)
		}
	}
}

func TestRunGoesOnAfterFailedInstall(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.failInstall["sidecar"] = errInstall
	ix := run(t, runOptions(t, studySource, f, t.TempDir(), nil))
	if !ix.Complete || len(ix.Cells) != 12 {
		t.Fatalf("complete=%v with %d cells", ix.Complete, len(ix.Cells))
	}
	for _, s := range ix.Cells {
		if s.Mesh != "sidecar" {
			if s.Status != results.StatusOK {
				t.Errorf("cell %s: %s %s", s.ID, s.Status, s.Reason)
			}
			continue
		}
		if s.Status != results.StatusFailed || !strings.Contains(s.Reason, "install mesh sidecar: istiod never became ready") {
			t.Errorf("cell %s: %s %q", s.ID, s.Status, s.Reason)
		}
		if len(s.Verification) != 1 || s.Verification[0].Pass {
			t.Errorf("cell %s keeps no failed check: %+v", s.ID, s.Verification)
		}
	}
	if f.count("measure sidecar") != 0 {
		t.Error("a cell measured a mesh that failed to install")
	}
}

func TestRunFailedDeployFailsItsGroupOnce(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.failDeploy = errors.New("pods never became ready")
	ix := run(t, runOptions(t, studySource, f, t.TempDir(), nil))
	for _, s := range ix.Cells {
		if s.Status != results.StatusFailed || !strings.Contains(s.Reason, "deploy the workload: pods never became ready") {
			t.Fatalf("cell %s: %s %q", s.ID, s.Status, s.Reason)
		}
	}
	if f.count("deploy") != 1 {
		t.Errorf("deployed %d times; a failed group is not retried per cell", f.count("deploy"))
	}
}

// TestRunInterruptAndResume cancels the run during its fifth measurement:
// the four finished cells must be on disk under a valid, incomplete index,
// and resuming must run exactly the eight others.
func TestRunInterruptAndResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake()
	f.onMeasure = func(n int) error {
		if n == 5 {
			cancel()
			return context.Canceled
		}
		return nil
	}
	var progress bytes.Buffer
	_, err := Run(ctx, runOptions(t, studySource, f, dir, &progress))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatalf("partial index: %v", err)
	}
	if ix.Complete || len(ix.Cells) != 4 || ix.Planned != 12 {
		t.Fatalf("partial index complete=%v cells=%d planned=%d", ix.Complete, len(ix.Cells), ix.Planned)
	}
	files, _ := filepath.Glob(filepath.Join(dir, results.CellsDir, "*.json"))
	if len(files) != 4 {
		t.Errorf("%d cell files after the interrupt, want 4", len(files))
	}
	if f.count("down") != 1 {
		t.Error("an interrupted run did not tear the platform down")
	}
	if !strings.Contains(progress.String(), "meshbench run --resume "+dir) {
		t.Errorf("progress does not say how to resume:\n%s", progress.String())
	}

	// Resume as `meshbench run --resume DIR` does: from the results' own
	// study.yaml and graph.yaml.
	f2 := newFake()
	st, src, err := LoadRun(dir, PlatformOverride{}, false)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Study: st, Source: src, Open: f2.open, Dir: dir, Resume: true}
	final := run(t, o)
	if !final.Complete || len(final.Cells) != 12 || len(final.Resumed) != 1 {
		t.Fatalf("resumed index complete=%v cells=%d resumed=%v", final.Complete, len(final.Cells), final.Resumed)
	}
	if f2.measures != 8 {
		t.Errorf("the resumed run measured %d cells, want the 8 not done", f2.measures)
	}
	seen := map[string]bool{}
	for _, s := range final.Cells {
		if seen[s.ID] {
			t.Fatalf("cell %s ran twice", s.ID)
		}
		seen[s.ID] = true
	}
	for i, s := range ix.Cells {
		if final.Cells[i].ID != s.ID || !final.Cells[i].Start.Equal(s.Start) {
			t.Errorf("finished cell %d changed on resume: %s -> %s", i, s.ID, final.Cells[i].ID)
		}
	}

	o = runOptions(t, studySource, newFake(), dir, nil)
	o.Resume = true
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrComplete) {
		t.Errorf("resuming a complete run: %v, want ErrComplete", err)
	}
}

func TestResumeRefusesAnotherStudy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake()
	f.onMeasure = func(n int) error {
		cancel()
		return context.Canceled
	}
	if _, err := Run(ctx, runOptions(t, studySource, f, dir, nil)); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	o := runOptions(t, strings.Replace(studySource, "repetitions: 2", "repetitions: 3", 1), newFake(), dir, nil)
	o.Resume = true
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "the study file has changed") {
		t.Fatalf("resume with another study: %v", err)
	}
}

func TestResumeRefusesAnotherGraph(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake()
	f.onMeasure = func(n int) error {
		cancel()
		return context.Canceled
	}
	if _, err := Run(ctx, runOptions(t, studySource, f, dir, nil)); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	// The study names the graph file by path; that file changed since.
	g := strings.Replace(string(readFile(t, filepath.Join(dir, results.GraphFile))), "name: back", "name: back\n  replicas: 3", 1)
	if err := os.WriteFile(filepath.Join(dir, results.GraphFile), []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOptions(t, studySource, newFake(), dir, nil)
	o.Resume = true
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "differs from the one the run started with") {
		t.Fatalf("resume with another graph: %v", err)
	}
}

func TestRunRefusesNonEmptyDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), runOptions(t, studySource, newFake(), dir, nil))
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Run in a used directory: %v", err)
	}
}

// TestRunCalibrates checks that a study with a scaling section measures
// each mesh's capacity first and scales the cells' rate from the slowest.
func TestRunCalibrates(t *testing.T) {
	t.Parallel()
	src := `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: calibrated
workload: {graph: small-graph.yaml}
meshes: [{profile: sidecar}, {profile: ambient}]
load: {rate: 10000, duration: 600s, warmup: 30s}
repetitions: 1
scaling: {fraction: 0.5, measure: 20s, warmup: 5s}
`
	f := newFake()
	f.rates["sidecar"] = 400
	f.failInstall["ambient"] = errInstall
	dir := t.TempDir()
	var progress bytes.Buffer
	ix := run(t, runOptions(t, src, f, dir, &progress))
	sc := ix.Provenance.Scaling
	// The baseline serves 1000 req/s and the sidecar 400; half of the
	// sidecar's is 200 of the 10000 offered. The ambient mesh fails to
	// install and is left out.
	if sc == nil || sc.Mode != results.ScaleCalibrated || sc.BaselineCapacity != 1000 || sc.Reference != "sidecar" ||
		sc.Capacities["sidecar"] != 400 || len(sc.Capacities) != 2 || sc.Factor != 0.02 || sc.Rate != 200 || sc.PublishedRate != 10000 {
		t.Fatalf("scaling %+v", sc)
	}
	want := []string{"measure baseline rate=0", "measure sidecar rate=0", "measure sidecar rate=200"}
	var measures []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "measure") {
			measures = append(measures, c)
		}
	}
	if strings.Join(measures, "|") != strings.Join(want, "|") {
		t.Errorf("measurements %q, want %q", measures, want)
	}
	if !strings.Contains(progress.String(), "calibration: ambient left out") {
		t.Errorf("progress does not say ambient was left out:\n%s", progress.String())
	}
	if f.count("deploy") != 1 {
		t.Errorf("calibration and cells deployed %d times, want once", f.count("deploy"))
	}
	for _, s := range ix.Cells {
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		o := c.Load.Options
		if o.Rate != 200 || o.Duration.Seconds() != 20 || o.Warmup.Seconds() != 5 {
			t.Errorf("cell %s load %+v", s.ID, o)
		}
	}
}

func TestRunWithScaleFactor(t *testing.T) {
	t.Parallel()
	f := newFake()
	o := runOptions(t, studySource, f, t.TempDir(), nil)
	o.Scale = 0.5
	ix := run(t, o)
	if sc := ix.Provenance.Scaling; sc.Mode != results.ScaleFactor || sc.Factor != 0.5 {
		t.Fatalf("scaling %+v", sc)
	}
	if f.count("measure baseline rate=50") != 4 || f.count("measure baseline rate=0") != 0 {
		t.Errorf("calls %q", f.calls)
	}
}

// TestResumeRepairsDamagedCells damages two cell files of a complete run,
// one truncated and one deleted: resuming measures exactly those two
// again, and the results are whole.
func TestResumeRepairsDamagedCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := run(t, runOptions(t, studySource, newFake(), dir, nil))
	if !first.Complete || len(first.Cells) != 12 {
		t.Fatalf("first run: complete=%v, %d cells", first.Complete, len(first.Cells))
	}
	truncated, deleted := first.Cells[2], first.Cells[5]
	if err := os.Truncate(filepath.Join(dir, truncated.File), 10); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, deleted.File)); err != nil {
		t.Fatal(err)
	}
	f := newFake()
	var progress bytes.Buffer
	o := runOptions(t, studySource, f, dir, &progress)
	o.Resume = true
	final := run(t, o)
	if f.measures != 2 {
		t.Errorf("resume measured %d cells, want the 2 damaged", f.measures)
	}
	for _, want := range []string{"re-running cell " + truncated.ID + ": " + truncated.File + ": truncated", "re-running cell " + deleted.ID + ": " + deleted.File + ": missing"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if !final.Complete || len(final.Cells) != 12 {
		t.Fatalf("resumed: complete=%v, %d cells", final.Complete, len(final.Cells))
	}
	if d := results.CheckCells(dir, final); len(d) != 0 {
		t.Errorf("still damaged after resume: %v", d)
	}
}

// TestCalibrationMeasuresAgainWhenNoisy checks that a capacity the host
// spoiled is measured again and the highest kept: contention only lowers
// a closed loop's throughput.
func TestCalibrationMeasuresAgainWhenNoisy(t *testing.T) {
	t.Parallel()
	src := `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: calibrated
workload: {graph: small-graph.yaml}
meshes: [{profile: sidecar}]
load: {rate: 10000, duration: 600s, warmup: 30s}
repetitions: 1
scaling: {fraction: 0.5, measure: 20s, warmup: 5s}
`
	f := newFake()
	f.rates["sidecar"] = 400
	// The sidecar's first calibration (the second measurement) is noisy
	// and low; the next one quiet.
	f.onMeasure = func(n int) error {
		if n == 2 {
			f.rates["sidecar"] = 100
		} else {
			f.rates["sidecar"] = 400
		}
		return nil
	}
	f.host = func(profile string, n int) *infra.HostCPU {
		if n == 2 {
			return &infra.HostCPU{Noise: 0.5}
		}
		return &infra.HostCPU{}
	}
	var progress bytes.Buffer
	ix := run(t, runOptions(t, src, f, t.TempDir(), &progress))
	if sc := ix.Provenance.Scaling; sc == nil || sc.Capacities["sidecar"] != 400 {
		t.Fatalf("scaling %+v, want the sidecar's quiet capacity, 400", sc)
	}
	want := "measure baseline rate=0|measure sidecar rate=0|measure sidecar rate=0|measure sidecar rate=200"
	var measures []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "measure") {
			measures = append(measures, c)
		}
	}
	if got := strings.Join(measures, "|"); got != want {
		t.Errorf("measurements %q, want %q", got, want)
	}
	if !strings.Contains(progress.String(), "calibration: sidecar measured on a noisy host (0.500 cores of host noise, threshold 0.05; CPUs 0% slower than at their fastest, limit 25%): 100.0 req/s; measuring again (1 of ") {
		t.Errorf("progress does not say the sidecar was measured again:\n%s", progress.String())
	}
	if strings.Contains(progress.String(), "may be low") {
		t.Errorf("progress warns of a low capacity the run measured again:\n%s", progress.String())
	}
}
