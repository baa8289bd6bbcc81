//go:build !labonly

package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// A resumed run keeps the configuration it started with: flags that
// would change it are refused, before anything runs.
func TestControlPlaneResumeRefusesNewSettings(t *testing.T) {
	for _, f := range []runFlags{
		{preset: controlPlaneStudy, resume: "r", out: "other"},
		{preset: controlPlaneStudy, resume: "r", controlPlane: controlPlaneFlags{pods: []int{100}}},
		{preset: controlPlaneStudy, resume: "r", controlPlane: controlPlaneFlags{modes: []string{"ambient"}}},
		{preset: controlPlaneStudy, resume: "r", controlPlane: controlPlaneFlags{changes: 3}},
		{preset: controlPlaneStudy, resume: "r", plan: true},
	} {
		err := runControlPlane(context.Background(), Streams{Out: io.Discard, ErrOut: io.Discard}, &globals{}, f)
		if err == nil || !strings.Contains(err.Error(), "resume") {
			t.Errorf("%+v: err = %v, want a refusal naming --resume", f, err)
		}
	}
}
