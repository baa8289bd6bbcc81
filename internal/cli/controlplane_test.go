//go:build !labonly

package cli

import (
	"testing"

	"github.com/meshbench/meshbench/internal/cpstudy"
)

func TestControlPlaneStudyName(t *testing.T) {
	if controlPlaneStudy != cpstudy.Name {
		t.Fatalf("the CLI recognises %q, the study is named %q", controlPlaneStudy, cpstudy.Name)
	}
}
