//go:build !labonly

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshbench/meshbench/internal/cpstudy"
)

func TestControlPlaneStudyName(t *testing.T) {
	if controlPlaneStudy != cpstudy.Name {
		t.Fatalf("the CLI recognises %q, the study is named %q", controlPlaneStudy, cpstudy.Name)
	}
	dir := t.TempDir()
	if isControlPlaneResults(dir) {
		t.Fatal("an empty directory taken for a control-plane study's results")
	}
	if err := os.WriteFile(filepath.Join(dir, cpstudy.ResultsFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !isControlPlaneResults(dir) {
		t.Fatalf("a directory with %s not taken for a control-plane study's results", cpstudy.ResultsFile)
	}
}
