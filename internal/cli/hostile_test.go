package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestReportRefusesHostileResults runs the binary's report on results
// directories someone made hostile with sparse 10 GB files, which cost
// them nothing: each is refused with a message naming the file, and the
// process's peak memory (its rusage) stays under 200 MiB. The runs have
// their address space capped at 4 GiB, so that reading a file whole
// fails them rather than the machine.
func TestReportRefusesHostileResults(t *testing.T) {
	t.Parallel()
	const sparse = 10 << 30
	tests := []struct {
		name  string
		plant func(t *testing.T, dir string, ix *results.Index)
		want  string
	}{
		{name: "cell file", want: "changed since the run wrote it: 10737418240 bytes", plant: func(t *testing.T, dir string, ix *results.Index) {
			grow(t, filepath.Join(dir, ix.Cells[0].File))
		}},
		{name: "cell file, index edited to match", want: "10737418240 bytes, more than the 268435456 a cell file can be", plant: func(t *testing.T, dir string, ix *results.Index) {
			grow(t, filepath.Join(dir, ix.Cells[0].File))
			ix.Cells[0].Bytes = sparse
			writeIndex(t, dir, ix)
		}},
		{name: "index", want: results.IndexFile + ": refused: 10737418240 bytes, more than the", plant: func(t *testing.T, dir string, ix *results.Index) {
			grow(t, filepath.Join(dir, results.IndexFile))
		}},
		{name: "study file", want: results.StudyFile + ": refused: 10737418240 bytes, more than the", plant: func(t *testing.T, dir string, ix *results.Index) {
			grow(t, filepath.Join(dir, results.StudyFile))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			tt.plant(t, dir, ix)
			var stderr bytes.Buffer
			cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"meshbench", "report", dir, "--out", t.TempDir()}, Stderr: &stderr,
				Env: append(os.Environ(), limitAddressSpaceEnv+"="+strconv.Itoa(4<<30))}
			err = cmd.Run()
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("report: %v, want it to exit non-zero; stderr: %s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("report says %q, want %q", stderr.String(), tt.want)
			}
			// The index's and the study file's want name them; a cell's
			// names its file.
			if cell := ix.Cells[0].File + ": "; strings.HasPrefix(tt.name, "cell file") && !strings.Contains(stderr.String(), cell) {
				t.Errorf("report says %q, want it to name %s", stderr.String(), ix.Cells[0].File)
			}
			// Maxrss is in KiB on Linux.
			if peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10; peak >= 200<<20 {
				t.Errorf("report's peak RSS was %d MiB, want under 200", peak>>20)
			} else {
				t.Logf("peak RSS %d MiB", peak>>20)
			}
		})
	}
}

// grow makes path a sparse 10 GB file.
func grow(t *testing.T, path string) {
	t.Helper()
	if err := os.Truncate(path, 10<<30); err != nil {
		t.Fatal(err)
	}
}

func writeIndex(t *testing.T, dir string, ix *results.Index) {
	t.Helper()
	b, err := json.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.IndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRefusesAForeignChart resumes, from the command line, a
// results directory whose study names a chart repository of its own: it
// is refused before anything is checked or created, naming the field
// and --trust-study; --trust-study is refused where no resumed study is
// read.
func TestResumeRefusesAForeignChart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile("../study/testdata/valid-kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte("    image: registry.example/meshbench:v0.1.0\n"),
		[]byte("    image: registry.example/meshbench:v0.1.0\n    charts:\n      istiod: {chart: istiod, repo: https://charts.evil.example}\n"), 1)
	if err := results.WriteFile(dir, results.StudyFile, src); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	err = Run(t.Context(), streams, []string{"run", "--resume", dir, "--context", "mine", "--image", "registry.example/mine:v1"})
	if err == nil || !strings.Contains(err.Error(), "study.yaml:14:37: platform.kubernetes.charts.istiod.repo: \"https://charts.evil.example\"") || !strings.Contains(err.Error(), "--trust-study") {
		t.Fatalf("run --resume: %v, want the chart repository refused at its line, naming --trust-study", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the refused resume left %d entries in the directory, want only the study file", len(entries))
	}
	if err := Run(t.Context(), streams, []string{"run", "--trust-study", "--validate"}); err == nil || !strings.Contains(err.Error(), "--trust-study is for --resume DIR") {
		t.Errorf("run --trust-study without --resume: %v, want it refused", err)
	}
}
