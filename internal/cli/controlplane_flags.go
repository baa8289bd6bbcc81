package cli

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

// controlPlaneStudy is the control-plane study's name (cpstudy.Name),
// spelled here so that a lab-only build recognises it without linking the
// study's Kubernetes libraries.
const controlPlaneStudy = "control-plane"

// controlPlaneFlags are the control-plane study's own settings, which
// `meshbench run --study control-plane` takes besides --out.
type controlPlaneFlags struct {
	pods    []int
	modes   []string
	changes int
	keep    bool
}

func addControlPlaneFlags(fl *pflag.FlagSet, f *controlPlaneFlags) {
	fl.IntSliceVar(&f.pods, "cp-pods", nil, "control-plane study: the scale points, in pods (default 100,1000,5000)")
	fl.StringSliceVar(&f.modes, "cp-modes", nil, "control-plane study: the modes, of sidecar, sidecar-scoped, ambient, ambient-waypoint (default sidecar,sidecar-scoped,ambient)")
	fl.IntVar(&f.changes, "cp-changes", 0, "control-plane study: changes per scale point and mode (default 16)")
	fl.BoolVar(&f.keep, "cp-keep", false, "control-plane study: keep the local control plane's logs and data")
}

// isControlPlaneResults reports whether dir holds a control-plane study's
// results (cpstudy.ResultsFile), whose report the study writes itself.
func isControlPlaneResults(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "control-plane.json"))
	return err == nil
}
