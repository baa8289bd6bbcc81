package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// A mesh measured with access logs on is named in the report, with the
// note that their CPU is inside its figures; without, no note.
func TestReportSaysAccessLogsWereOn(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1, Requests: 2000,
			AccessLog: map[string]bool{resultstest.Ambient: on}}); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		if _, err := Generate(context.Background(), Options{Dirs: []string{dir}, Out: out, Formats: []string{"md"}}); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(string(md), "Access logs were on for "+resultstest.Ambient+": ") &&
			strings.Contains(string(md), "inside the data-plane figures")
		if said != on {
			t.Errorf("access_log %v: the report says so: %v", on, said)
		}
	}
}
