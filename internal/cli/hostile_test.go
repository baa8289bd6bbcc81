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
