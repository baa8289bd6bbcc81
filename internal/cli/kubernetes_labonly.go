//go:build labonly

package cli

import (
	"context"
	"errors"
	"log/slog"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/study"
	"github.com/spf13/cobra"
)

// A lab-only build (`make demo` makes one) leaves out the Kubernetes
// platform, whose client-go and Helm libraries are two thirds of what a
// cold build compiles.
const labOnlyFix = "build the whole binary with: make build"

const labOnly = true

// labOnlyNote is what --help says of this build.
const labOnlyNote = "This build is LAB-ONLY (built with -tags labonly, as make demo builds it): the kubernetes platform is left out; " + labOnlyFix + "."

func buildPlatforms() []string { return []string{infra.Lab} }

var errLabOnly = errors.New("this meshbench was built for the lab only (make demo builds it so); for the kubernetes platform, " + labOnlyFix)

func openKubernetes(study.Platform, *slog.Logger) (platform.Platform, error) {
	return nil, errLabOnly
}

func kubernetesFindings(context.Context, study.Platform, []string) []platform.Finding {
	return []platform.Finding{{Check: "kubernetes", Detail: "this meshbench was built for the lab only", Fix: labOnlyFix}}
}

func newKubernetesCmd(Streams, *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "kubernetes",
		Short: "Manage what meshbench runs made in a Kubernetes cluster (not in a lab-only build)",
		RunE:  func(*cobra.Command, []string) error { return errLabOnly },
	}
}
