package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/kube"
	"github.com/meshbench/meshbench/internal/study"
)

// kubeDoctor runs the Kubernetes preflight for a study's platform section
// and writes one line per finding to w, failures with their fix; it
// returns how many failed.
func kubeDoctor(ctx context.Context, w io.Writer, p study.Platform) int {
	o := kubeOptions(p.Kubernetes)
	o.Ingress, o.Meshes = p.Ingress, p.Meshes
	failed := 0
	for _, f := range kube.Doctor(ctx, o, platform.ClusterSpec{Nodes: p.Nodes}) {
		if f.OK {
			fmt.Fprintf(w, "ok    %s: %s\n", f.Check, f.Detail)
			continue
		}
		failed++
		fmt.Fprintf(w, "FAIL  %s: %s\n      fix: %s\n", f.Check, f.Detail, f.Fix)
	}
	return failed
}

// kubePreflight runs the doctor before a run on Kubernetes and refuses the
// run, with every failing check and its fix, when any fails.
func kubePreflight(ctx context.Context, p study.Platform) error {
	var report strings.Builder
	if n := kubeDoctor(ctx, &report, p); n > 0 {
		return fmt.Errorf("kubernetes preflight: %d checks failed; nothing was created:\n%s", n, report.String())
	}
	return nil
}
