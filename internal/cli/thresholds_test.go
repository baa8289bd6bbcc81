package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/study"
)

// TestReportThresholdsExitCodes: report judges the thresholds of the
// study a results directory keeps, prints one line each after the files,
// and exits 4 when one is not met, a figure not measured included, 0
// when every one is.
func TestReportThresholdsExitCodes(t *testing.T) {
	t.Parallel()
	main := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		return code, out.String(), errOut.String()
	}
	results := func(o resultstest.Options) string {
		dir := t.TempDir()
		if _, err := resultstest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	met := results(resultstest.Options{Seed: 1, Rate: 100, Thresholds: []string{"p99_added_ms < 1000", "istio-sidecar: usd_per_million_requests < 1"}})
	code, stdout, stderr := main("report", met, "--out", t.TempDir())
	if code != ExitOK {
		t.Errorf("thresholds met: exit %d, want 0; stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 4 || !strings.HasSuffix(lines[0], "report.html") ||
		!strings.HasPrefix(lines[len(lines)-3], "threshold istio-ambient: p99_added_ms < 1000: met, ") ||
		!strings.HasPrefix(lines[len(lines)-2], "threshold istio-sidecar: p99_added_ms < 1000: met, ") ||
		!strings.HasPrefix(lines[len(lines)-1], "threshold istio-sidecar: usd_per_million_requests < 1: met, ") {
		t.Errorf("stdout does not list the files, then a line per threshold and mesh:\n%s", stdout)
	}

	notMet := results(resultstest.Options{Seed: 1, Rate: 100, Thresholds: []string{"p99_added_ms < 1000", "istio-sidecar: p50_added_ms < 1"}})
	code, stdout, stderr = main("report", notMet, "--out", t.TempDir())
	if code != ExitThresholds || !strings.Contains(stdout, "threshold istio-sidecar: p50_added_ms < 1: NOT met, ") ||
		!strings.Contains(stderr, "1 of 3 thresholds not met") {
		t.Errorf("a threshold not met: exit %d, want %d; stdout:\n%s\nstderr %q", code, ExitThresholds, stdout, stderr)
	}

	// A figure the run did not measure is not met: no capacity search ran.
	unmeasured := results(resultstest.Options{Seed: 1, Thresholds: []string{"istio-sidecar: capacity_ratio > 0.5"}})
	code, stdout, stderr = main("report", unmeasured, "--out", t.TempDir())
	if code != ExitThresholds || !strings.Contains(stdout, "threshold istio-sidecar: capacity_ratio > 0.5: not measured, which counts as not met: the study ran no capacity search") ||
		!strings.Contains(stderr, "1 of 1 thresholds not met (1 of them not measured") {
		t.Errorf("a threshold not measured: exit %d, want %d; stdout:\n%s\nstderr %q", code, ExitThresholds, stdout, stderr)
	}

	// -o json holds them as "thresholds" and leaves stdout to the JSON; the
	// lines go to stderr, and the exit code is the same.
	code, stdout, stderr = main("report", notMet, "-o", "json")
	var doc struct {
		Thresholds []struct {
			Threshold, Metric, Mesh, Op, Status string
			Limit                               float64
			Value, Low, High, Level             *float64
			Met                                 bool
		} `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("report -o json is not JSON: %v", err)
	}
	if code != ExitThresholds || len(doc.Thresholds) != 3 || !strings.Contains(stderr, "threshold istio-sidecar: p50_added_ms < 1: NOT met") {
		t.Errorf("report -o json: exit %d, %d thresholds, stderr %q", code, len(doc.Thresholds), stderr)
	}
	if th := doc.Thresholds[2]; th.Threshold != "istio-sidecar: p50_added_ms < 1" || th.Metric != "p50_added_ms" || th.Mesh != "istio-sidecar" ||
		th.Op != "<" || th.Limit != 1 || th.Value == nil || th.Low == nil || th.High == nil || th.Level == nil || th.Met || th.Status != "not met" {
		t.Errorf("JSON threshold %+v", th)
	}

	// Without thresholds nothing changes: exit 0, no line.
	code, stdout, _ = main("report", results(resultstest.Options{Seed: 1}), "--out", t.TempDir())
	if code != ExitOK || strings.Contains(stdout, "threshold") {
		t.Errorf("no thresholds: exit %d, stdout:\n%s", code, stdout)
	}
}

// TestReportThresholdsOfFailedCells: a mesh whose cells failed has no
// figures, so its thresholds are not measured: exit 4.
func TestReportThresholdsOfFailedCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1, Rate: 100, Thresholds: []string{"p99_added_ms < 1000"}})
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
	var out, errOut bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"report", dir, "--out", t.TempDir()})
	if code != ExitThresholds || !strings.Contains(out.String(), "threshold istio-ambient: p99_added_ms < 1000: not measured") ||
		!strings.Contains(out.String(), "threshold istio-sidecar: p99_added_ms < 1000: met") {
		t.Errorf("exit %d, want %d; stdout:\n%s\nstderr %q", code, ExitThresholds, out.String(), errOut.String())
	}
}

// TestRunErrorPrecedence: a run whose cells failed exits 1 even when its
// thresholds were not met as well, naming both; thresholds alone exit 4.
func TestRunErrorPrecedence(t *testing.T) {
	t.Parallel()
	cells := errors.New("1 of 6 cells failed")
	thresholds := report.ThresholdsNotMet([]report.ThresholdOutcome{{Status: report.ThresholdNotMet}})
	for _, tc := range []struct {
		name              string
		cells, thresholds error
		want              int
	}{
		{"all well", nil, nil, ExitOK},
		{"thresholds", nil, thresholds, ExitThresholds},
		{"cells", cells, nil, ExitFailure},
		{"both", cells, thresholds, ExitFailure},
	} {
		err := runError(tc.cells, tc.thresholds)
		if got := exitCode(err); got != tc.want {
			t.Errorf("%s: exit %d, want %d (%v)", tc.name, got, tc.want, err)
		}
		if tc.cells != nil && tc.thresholds != nil && (!strings.Contains(err.Error(), "cells failed") || !strings.Contains(err.Error(), "thresholds not met")) {
			t.Errorf("%s: %q does not name both", tc.name, err)
		}
	}
}

// TestRunJudgesThresholds: a finished run judges its study's thresholds
// from its results directory, as report does; a study without any costs
// nothing, and results that cannot be read are a failure, not a pass.
func TestRunJudgesThresholds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1, Rate: 100, Thresholds: []string{"istio-sidecar: p50_added_ms < 1"}}); err != nil {
		t.Fatal(err)
	}
	st := &study.Study{Thresholds: []analysis.ThresholdText{"istio-sidecar: p50_added_ms < 1"}}
	var out bytes.Buffer
	err := judgeRun(&out, dir, st, nil)
	if exitCode(err) != ExitThresholds || !strings.HasPrefix(out.String(), "threshold istio-sidecar: p50_added_ms < 1: NOT met, ") {
		t.Errorf("judgeRun: %v (exit %d), printed %q", err, exitCode(err), out.String())
	}
	out.Reset()
	if err := judgeRun(&out, dir, &study.Study{}, nil); err != nil || out.Len() > 0 {
		t.Errorf("a study without thresholds: %v, printed %q", err, out.String())
	}
	err = judgeRun(&out, t.TempDir(), st, nil)
	if err == nil || exitCode(err) != ExitFailure {
		t.Errorf("results that cannot be read: %v (exit %d), want a failure", err, exitCode(err))
	}
}
