package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func TestGenerateWritesReports(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var stdout bytes.Buffer
	files, err := Generate(context.Background(), Options{Dirs: []string{fixtureDir}, Out: out, SMP: "-", Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	// The fixture is a closed loop: no overhead chart (Little's law), the
	// verdict's costs and each configuration's latency spectrum.
	for _, want := range []string{HTMLFile, MarkdownFile, filepath.Join(ChartDir, "verdict-costs.svg"), filepath.Join(ChartDir, "latency-spectrum-connections-128-replicas-productpage-4.svg")} {
		if !slices.Contains(files, filepath.Join(out, want)) {
			t.Errorf("%s not among the files written: %v", want, files)
		}
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "overhead-") {
			t.Errorf("a closed-loop study wrote the overhead chart %s", f)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	// Every chart the Markdown links is a file beside it.
	for _, line := range strings.Split(string(md), "\n") {
		if i := strings.Index(line, "](charts/"); i >= 0 {
			name := line[i+2 : strings.LastIndex(line, ")")]
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				t.Errorf("Markdown links %s: %v", name, err)
			}
		}
	}
	var x smpExport
	if err := json.Unmarshal(stdout.Bytes(), &x); err != nil || len(x.Results) == 0 {
		t.Errorf("--smp - wrote no SMP export to stdout: %v", err)
	}
}

func TestGenerateOptionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no directory", Options{}, "one results directory"},
		{"two without compare", Options{Dirs: []string{fixtureDir, fixtureDir}}, "--compare"},
		{"compare with one", Options{Dirs: []string{fixtureDir}, Compare: true}, "two results directories"},
		{"unknown format", Options{Dirs: []string{fixtureDir}, Formats: []string{"pdf"}}, `unknown --format "pdf"`},
		{"not a results directory", Options{Dirs: []string{t.TempDir()}}, "not a results directory"},
	}
	for _, tt := range tests {
		_, err := Generate(context.Background(), tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestSMPExport(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	var buf bytes.Buffer
	if err := WriteSMP(&buf, d); err != nil {
		t.Fatal(err)
	}
	var x smpExport
	if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
		t.Fatal(err)
	}
	tests, meshes := map[string]bool{}, map[string]smpMeshConfig{}
	for _, c := range x.TestConfigs {
		tests[c.ID] = true
	}
	for _, m := range x.MeshConfigs {
		meshes[m.ID] = m
	}
	usable := len(d.Index.Cells) - len(d.Excluded)
	if len(x.Results) != usable || len(x.Omitted) != len(d.Excluded) {
		t.Errorf("%d results and %d omitted cells, want %d and %d", len(x.Results), len(x.Omitted), usable, len(d.Excluded))
	}
	for _, r := range x.Results {
		for _, o := range x.Omitted {
			if o.ID == r.ID {
				t.Errorf("excluded cell %s exported as a result", r.ID)
			}
		}
		m, ok := meshes[r.MeshConfigID]
		if !tests[r.TestID] || !ok || r.EnvID != x.Environment.ID {
			t.Errorf("result %s refers to missing configs: %s %s %s", r.ID, r.TestID, r.MeshConfigID, r.EnvID)
		}
		if _, err := time.Parse(time.RFC3339Nano, r.StartTime); err != nil || !strings.HasSuffix(r.StartTime, "Z") {
			t.Errorf("result %s start time %q is not a proto3 JSON timestamp", r.ID, r.StartTime)
		}
		l := r.LatenciesMs
		if !(l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) || r.ActualQPS <= 0 {
			t.Errorf("result %s latencies out of order: %+v", r.ID, l)
		}
		switch mesh := r.Labels["meshbench.mesh"]; mesh {
		case resultstest.Sidecar:
			// The fixture is a lab run: upstream Envoy, never exported as Istio.
			if m.MeshType != nil || m.Sidecar == nil || m.Sidecar.Count == 0 || !m.MTLSEnabled || m.ProxyBuild != "1.40.0" ||
				!strings.HasPrefix(m.Labels["meshbench.dataplane"], "upstream Envoy as Istio's sidecar") {
				t.Errorf("sidecar mesh config %+v", m)
			}
		case resultstest.Ambient:
			if m.Sidecar != nil || m.Labels["meshbench.node_proxy.count"] != "2" || m.ProxyBuild != "1.40.0" || m.MeshType != nil || !m.MTLSEnabled {
				t.Errorf("ambient mesh config %+v", m)
			}
		case resultstest.Baseline:
			if m.MeshType != nil || m.MTLSEnabled {
				t.Errorf("baseline mesh config %+v", m)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	b := t.TempDir()
	if _, err := resultstest.Write(b, resultstest.Options{Seed: 7, Slowdown: map[string]float64{resultstest.Sidecar: 1.25}}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, err := Generate(context.Background(), Options{Dirs: []string{fixtureDir, b}, Compare: true, Out: out, FailOnRegression: true})
	if !errors.Is(err, ErrRegression) {
		t.Fatalf("error %v, want a regression", err)
	}
	if !slices.Contains(files, filepath.Join(out, CompareMDFile)) || !slices.Contains(files, filepath.Join(out, CompareHTMLFile)) {
		t.Fatalf("files written: %v", files)
	}
	md, err := os.ReadFile(filepath.Join(out, CompareMDFile))
	if err != nil {
		t.Fatal(err)
	}
	// The slowed mesh's p50 is worse wherever six deployments a side can
	// tell (the three configurations with four replicas), and REGRESSED
	// only in the gate's family, at the main configuration; of the
	// figures that did not change, about 5% may cross zero by chance.
	var unchanged, flagged, sidecarP50, regressed int
	for _, line := range strings.Split(string(md[bytes.Index(md, []byte("## Every figure")):]), "\n") {
		row := cells(line)
		if len(row) != 6 || !strings.HasPrefix(line, "| ") || row[0] == "Mesh" || strings.HasPrefix(row[0], "---") {
			continue
		}
		switch {
		case row[0] == resultstest.Sidecar && row[1] == "p50":
			if row[5] == "REGRESSED" || row[5] == "worse" {
				sidecarP50++
			}
		case row[5] == "REGRESSED":
			regressed++
		case row[0] != resultstest.Sidecar:
			unchanged++
			if row[5] == "REGRESSED" || row[5] == "worse" || row[5] == "improved" {
				flagged++
			}
		}
	}
	// The fixture is a closed loop: no added latency anywhere, and the
	// gate's family judges throughput in its place.
	if bytes.Contains(md, []byte("| added ")) {
		t.Error("a closed-loop comparison shows added latency")
	}
	family := string(md[bytes.Index(md, []byte("The gate's family")):bytes.Index(md, []byte("## Every figure"))])
	if !strings.Contains(family, "| "+resultstest.Sidecar+" | connections=128, replicas.productpage=4 | QPS |") || !strings.Contains(family, "Little's law") {
		t.Errorf("the gate's family of a closed loop does not judge the sidecar's throughput, or does not say why:\n%s", family)
	}
	if sidecarP50 != 3 {
		t.Errorf("the sidecar's p50 was worse at %d configurations, want the 3 with six deployments", sidecarP50)
	}
	if regressed == 0 {
		t.Error("nothing in the gate's family REGRESSED")
	}
	if unchanged < 100 || float64(flagged) > 0.1*float64(unchanged) {
		t.Errorf("%d of %d unchanged figures flagged as changed", flagged, unchanged)
	}
	t.Logf("%d of %d unchanged figures crossed zero by chance", flagged, unchanged)

	// A run compared with itself has nothing to report.
	_, err = Generate(context.Background(), Options{Dirs: []string{fixtureDir, fixtureDir}, Compare: true, Out: t.TempDir(), FailOnRegression: true})
	if err != nil {
		t.Errorf("a run compared with itself: %v", err)
	}
}
