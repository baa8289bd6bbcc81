//go:build labonly

package cli

import (
	"context"
	"errors"

	"github.com/meshbench/meshbench/internal/study"
)

func runControlPlane(context.Context, Streams, *globals, runFlags) error {
	return errors.New("the control-plane study runs a local Kubernetes control plane, left out of this lab-only meshbench; " + labOnlyFix)
}

func controlPlaneReport(Streams, string) error {
	return errors.New("a control-plane study's report needs the study, left out of this lab-only meshbench; " + labOnlyFix)
}

// controlPlaneInfo: a lab-only meshbench cannot run the control-plane
// study, so that `meshbench studies` does not list it.
func controlPlaneInfo() (study.PresetInfo, bool) { return study.PresetInfo{}, false }
