package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir, dirB := t.TempDir(), t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := resultstest.Write(dirB, resultstest.Options{Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 1.3}}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		return out.String(), errOut.String(), err
	}

	out := t.TempDir()
	stdout, _, err := run("report", dir, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture is a closed loop, which draws no overhead chart (its
	// added latency would restate its throughput, Little's law): the
	// verdict's costs and the latency spectra.
	for _, f := range []string{"report.html", "report.md", "charts/verdict-costs.svg", "charts/latency-spectrum-connections-128-replicas-productpage-4.svg"} {
		if !strings.Contains(stdout, filepath.Join(out, f)+"\n") {
			t.Errorf("stdout does not list %s:\n%s", f, stdout)
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if strings.Contains(stdout, "overhead-p") {
		t.Errorf("a closed loop's report lists an overhead chart:\n%s", stdout)
	}

	// The SMP export on stdout stays parseable: the file list goes to stderr.
	stdout, stderr, err := run("report", dir, "--out", t.TempDir(), "--smp", "-")
	if err != nil {
		t.Fatal(err)
	}
	var smp map[string]any
	if err := json.Unmarshal([]byte(stdout), &smp); err != nil || smp["smp_version"] == nil {
		t.Errorf("stdout is not an SMP export: %v", err)
	}
	if !strings.Contains(stderr, "report.md") {
		t.Errorf("stderr does not list report.md: %q", stderr)
	}

	// -o json prints the report, verdict first, and writes nothing.
	empty := t.TempDir()
	stdout, _, err = run("report", dir, "-o", "json", "--out", empty)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Banner   []string `json:"banner"`
		Sections []struct {
			ID     string `json:"id"`
			Blocks []struct {
				Table *struct {
					Header []string   `json:"header"`
					Rows   [][]string `json:"rows"`
				} `json:"table"`
			} `json:"blocks"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("report -o json is not JSON: %v", err)
	}
	if len(doc.Banner) == 0 || doc.Sections[0].ID != "verdict" || doc.Sections[0].Blocks[0].Table == nil || len(doc.Sections[0].Blocks[0].Table.Rows) != 3 {
		t.Errorf("report -o json does not lead with the banner and a verdict row per mesh: %.400s", stdout)
	}
	if files, _ := os.ReadDir(empty); len(files) > 0 {
		t.Errorf("report -o json wrote %d files", len(files))
	}
	stdout, _, err = run("report", dir, "-o", "markdown")
	if err != nil || !strings.HasPrefix(stdout, "# meshbench report") {
		t.Errorf("report -o markdown: %v, %.80q", err, stdout)
	}

	// compare finds the slowed-down sidecar; with --fail-on-regression
	// that is exit code 3. The deprecated report --compare does the same.
	var errOut bytes.Buffer
	code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut},
		[]string{"compare", dir, dirB, "--out", t.TempDir(), "--fail-on-regression"})
	if code != ExitRegression || !strings.Contains(errOut.String(), "regressed against") {
		t.Errorf("compare with a regression: exit %d, %q", code, errOut.String())
	}
	stdout, _, err = run("compare", dir, dirB, "-o", "markdown")
	if err != nil || !strings.Contains(stdout, "istio-sidecar") {
		t.Errorf("compare -o markdown: %v, %.200q", err, stdout)
	}
	_, stderr, err = run("report", "--compare", dir, dirB, "--out", t.TempDir(), "--fail-on-regression")
	if err == nil || !strings.Contains(err.Error(), "regressed against") || !strings.Contains(stderr, "deprecated") {
		t.Errorf("report --compare: a regression passed or no deprecation: %v, %q", err, stderr)
	}
	if _, _, err := run("report"); err == nil {
		t.Error("report without a directory succeeded")
	}
}

// TestFailOnRegressionExitCodes checks the exit codes a CI job reads:
// 3 when the new result set regressed against the old, 0 when it did not.
func TestFailOnRegressionExitCodes(t *testing.T) {
	t.Parallel()
	old, slower, same := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, o := range map[string]resultstest.Options{
		old:    {Seed: 1},
		slower: {Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 1.3}},
		same:   {Seed: 1},
	} {
		if _, err := resultstest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	main := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		return code, errOut.String()
	}
	if code, stderr := main("compare", old, slower, "--out", t.TempDir(), "--fail-on-regression"); code != ExitRegression {
		t.Errorf("a synthetic regression: exit %d, want %d; stderr:\n%s", code, ExitRegression, stderr)
	}
	if code, stderr := main("compare", old, same, "--out", t.TempDir(), "--fail-on-regression"); code != 0 {
		t.Errorf("no regression: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"version", []string{"version"}, ExitOK},
		{"unknown command", []string{"frobnicate"}, ExitUsage},
		{"unknown flag", []string{"report", "--frob"}, ExitUsage},
		{"too many arguments", []string{"version", "x"}, ExitUsage},
		{"bad -o", []string{"version", "-o", "yaml"}, ExitUsage},
		{"no such results", []string{"report", "/nonexistent/results"}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var errOut bytes.Buffer
			if got := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut}, tc.args); got != tc.want {
				t.Errorf("meshbench %v: exit %d, want %d (%s)", tc.args, got, tc.want, errOut.String())
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}}, []string{"version", "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	var v VersionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, out.String())
	}
	if v.Version != Version || v.GoVersion == "" || len(v.Platforms) == 0 || (v.EnvoyVersion == "" && v.EnvoyError == "") {
		t.Errorf("version -o json lacks a field: %+v", v)
	}
	if labOnly != (len(v.Platforms) == 1) {
		t.Errorf("a lab-only build (%v) lists platforms %v", labOnly, v.Platforms)
	}
}

// TestCompareWritesOnlyWithOut: compare A B prints the comparison and
// leaves both results directories as they were; --out DIR writes
// compare.html and compare.md there.
func TestCompareWritesOnlyWithOut(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	for dir, o := range map[string]resultstest.Options{a: {Seed: 1}, b: {Seed: 2}} {
		if _, err := resultstest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	listing := func(dir string) []string {
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	beforeA, beforeB := listing(a), listing(b)
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"compare", a, b}); code != ExitOK {
		t.Fatalf("compare A B: exit %d: %s", code, errOut.String())
	}
	if got := listing(b); !slices.Equal(got, beforeB) {
		t.Errorf("compare A B wrote into B: %v, was %v", got, beforeB)
	}
	if got := listing(a); !slices.Equal(got, beforeA) {
		t.Errorf("compare A B wrote into A: %v, was %v", got, beforeA)
	}
	if !strings.Contains(out.String(), "istio-sidecar") {
		t.Errorf("compare A B printed no comparison: %.200q", out.String())
	}
	dir := t.TempDir()
	out.Reset()
	if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"compare", a, b, "--out", dir}); code != ExitOK {
		t.Fatalf("compare --out: exit %d: %s", code, errOut.String())
	}
	if got := listing(dir); !slices.Contains(got, "compare.html") || !slices.Contains(got, "compare.md") {
		t.Errorf("compare --out wrote %v, want compare.html and compare.md", got)
	}
}
