package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, f := range []string{"report.html", "report.md", "charts/overhead-p95.svg"} {
		if !strings.Contains(stdout, filepath.Join(out, f)+"\n") {
			t.Errorf("stdout does not list %s:\n%s", f, stdout)
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
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

	_, _, err = run("report", "--compare", dir, dirB, "--out", t.TempDir(), "--fail-on-regression")
	if err == nil || !strings.Contains(err.Error(), "regressed against") {
		t.Errorf("a regression passed: %v", err)
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
	if code, stderr := main("report", "--compare", old, slower, "--out", t.TempDir(), "--fail-on-regression"); code != ExitRegression {
		t.Errorf("a synthetic regression: exit %d, want %d; stderr:\n%s", code, ExitRegression, stderr)
	}
	if code, stderr := main("report", "--compare", old, same, "--out", t.TempDir(), "--fail-on-regression"); code != 0 {
		t.Errorf("no regression: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
