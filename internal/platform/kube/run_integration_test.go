package kube_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/cli"
	"github.com/meshbench/meshbench/internal/platform/kube"
	"github.com/meshbench/meshbench/internal/results"
)

// TestIntegrationRunStudy runs `meshbench run --platform kubernetes` the
// way a user does, through the CLI, against the test cluster: a study file
// with baseline and Istio ambient. Baseline goes through every step of a
// cell, its load phase answered by the simulated generator's log; ambient
// installs from Istio's charts and must fail its verification (kwok pods
// are never enrolled by a CNI agent), failing that cell alone, so that the
// run exits 1 naming it. The results
// must feed the same report as the lab's, and the cluster must be left as
// it was found.
func TestIntegrationRunStudy(t *testing.T) {
	c := kube.NeedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	before := kube.Snapshot(t, ctx, c.Kubeconfig)

	dir := t.TempDir()
	studyFile := filepath.Join(dir, "kube-flow.yaml")
	// The study names no platform type (the lab, by default) and gives its
	// nodes by role alone: --platform kubernetes must run it as it is, as
	// the README promises one study file runs on both platforms.
	src := fmt.Sprintf(`apiVersion: meshbench.dev/v1alpha1
kind: Study
name: kube-flow
platform:
  nodes:
  - {role: app}
  - {role: load, taints: ["meshbench.io/dedicated=load:NoSchedule"]}
  - {role: mesh}
  kubernetes:
    image: meshbench.test/meshbench:it
    prometheus: %s
    timeout: 2m
    sample_interval: 500ms
    charts:
      istio-base: {chart: %[2]s/base}
      istiod: {chart: %[2]s/istio-control/istio-discovery}
      istio-cni: {chart: %[2]s/istio-cni}
      ztunnel: {chart: %[2]s/ztunnel}
workload:
  graph: tiered
meshes:
- profile: baseline
- profile: ambient
load:
  rate: 10
  connections: 1
  duration: 2s
repetitions: 1
`, kube.EmptyPrometheus(t), c.Charts)
	if err := os.WriteFile(studyFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, cli.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
		[]string{"run", studyFile, "--platform", "kubernetes", "--kubeconfig", c.Kubeconfig, "--context", kube.RunnerContext, "--out", out})
	// The ambient cell fails, so the run exits 1 (a failed cell) and
	// names it, with the results kept.
	if code != cli.ExitFailure || !strings.Contains(stderr.String(), "1 of 2 cells failed") || !strings.Contains(stderr.String(), "ambient_r1: ") {
		t.Fatalf("meshbench run exited %d, want %d naming the failed ambient cell:\n%s", code, cli.ExitFailure, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != out {
		t.Errorf("stdout %q, want the results directory %q", got, out)
	}

	ix, err := results.ReadIndex(out)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete || ix.Planned != 2 || len(ix.Cells) != 2 {
		t.Fatalf("index: complete %v, %d planned, %d cells; want a complete run of 2", ix.Complete, ix.Planned, len(ix.Cells))
	}
	if ix.Provenance.Platform.Name != "kubernetes" {
		t.Errorf("provenance platform %q, want kubernetes", ix.Provenance.Platform.Name)
	}
	cells := map[string]results.Summary{}
	for _, s := range ix.Cells {
		cells[s.Mesh] = s
	}

	base := cells["baseline"]
	if base.Status != results.StatusOK {
		t.Fatalf("baseline cell %s: %s, want ok\n%s", base.Status, base.Reason, stderr.String())
	}
	if base.Requests != c.GeneratorResult.Requests {
		t.Errorf("baseline cell has %d requests, want the generator's %d", base.Requests, c.GeneratorResult.Requests)
	}
	cell, err := results.ReadCell(out, base)
	if err != nil {
		t.Fatal(err)
	}
	if cell.Merged == nil || !cell.Merged.Latency.Equal(c.GeneratorResult.Latency) {
		t.Error("baseline cell's merged histogram differs from the one the generator logged")
	}
	// The generator's own log is kept with the results, for a reader
	// of a failed or distorted cell.
	if logs, _ := filepath.Glob(filepath.Join(out, results.CellLogDir(base.ID), "*.log")); len(logs) != 1 {
		t.Errorf("baseline cell's log directory holds %v, want the one generator's log", logs)
	}

	amb := cells["ambient"]
	if amb.Status != results.StatusFailed || !strings.Contains(amb.Reason, "ambient-enrolled") {
		t.Errorf("ambient cell %s (%s), want failed by the ambient-enrolled check", amb.Status, amb.Reason)
	}
	enrolled := false
	for _, ch := range amb.Verification {
		if ch.Name == "ambient-enrolled" {
			enrolled = true
			if ch.Pass {
				t.Error("ambient-enrolled passed, but no CNI agent enrolled the simulated pods")
			}
		}
	}
	if !enrolled {
		t.Errorf("ambient cell's verification %+v lacks ambient-enrolled", amb.Verification)
	}
	// The cell records the charts as installed, with their own versions
	// (the module's snapshot of Istio's charts, not the pinned 1.22.0).
	recorded := false
	for _, ch := range amb.Verification {
		if ch.Name != "mesh-installed" {
			continue
		}
		recorded = true
		if !strings.HasPrefix(ch.Facts["chart/istiod"], "istiod 1.0.0 from "+c.Charts) || ch.Facts["kubernetes"] != "v1.34.4" || ch.ConfigHash == "" {
			t.Errorf("mesh-installed facts %v (hash %q), want istiod's chart as installed and v1.34.4", ch.Facts, ch.ConfigHash)
		}
	}
	if !recorded {
		t.Errorf("ambient cell's verification %+v does not record what was installed", amb.Verification)
	}

	// The same report as the lab's, from the same result format.
	stderr.Reset()
	if code := cli.Main(ctx, cli.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, []string{"report", out}); code != 0 {
		t.Fatalf("meshbench report exited %d:\n%s", code, stderr.String())
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte("ambient-enrolled")) {
		t.Error("report.html does not show the failed verification check")
	}

	if extra := kube.DiffSnapshots(before, kube.Snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("the run left %d objects behind: %s", len(extra), strings.Join(extra, ", "))
	}
}
