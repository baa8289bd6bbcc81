package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestGenerateRefusesDamagedResults: a report from results whose cell
// file was truncated, changed or lost would show figures nobody measured;
// meshbench report names each such file and says how to measure it again,
// and writes no report.
func TestGenerateRefusesDamagedResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	truncated, changed, missing := ix.Cells[0], ix.Cells[1], ix.Cells[2]
	if err := os.Truncate(filepath.Join(dir, truncated.File), 100); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, changed.File))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, changed.File), []byte(strings.Replace(string(b), `"status": "ok"`, `"status": "ok" `, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, missing.File)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, err := Generate(context.Background(), Options{Dirs: []string{dir}, Out: out})
	if err == nil {
		t.Fatalf("Generate wrote %v from damaged results", files)
	}
	for _, want := range []string{
		truncated.File + ": truncated: 100 of the",
		changed.File + ": changed since the run wrote it",
		missing.File + ": missing",
		"re-run those cells with: meshbench run --resume " + dir,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if entries, _ := os.ReadDir(out); len(files) != 0 || len(entries) != 0 {
		t.Errorf("wrote %v (%d entries) from damaged results", files, len(entries))
	}
}
