package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
)

// Doctor checks, creating nothing, what a study needs of this host to run
// on the lab: the host's kernel features, root and CPUs, no other lab on
// those CPUs, a hypervisor that leaves them to the study when they are
// busy (a second of load), Envoy at the version the data planes are written for (when
// the study installs a mesh), each Envoy release its meshes name, and free disk for the results. self names
// the caller's own lab, which is not counted as another.
func Doctor(ctx context.Context, n platform.Needs, self string) []platform.Finding {
	var cpus []string
	for _, node := range n.Nodes {
		cpus = append(cpus, node.CPUs)
	}
	out := cluster.HostFindings(ctx, cpus)
	out = append(out, cluster.BusyFinding(cluster.DefaultStateRoot, self, cpus, n.SharedHost))
	out = append(out, cluster.ContentionFinding(ctx, cpus, n.SharedHost))
	if n.Meshes() {
		out = append(out, envoyFinding(ctx))
	}
	for _, v := range n.ProxyVersions {
		out = append(out, envoyReleaseFinding(ctx, v))
	}
	return append(out, platform.DiskFinding(n.ResultsDir, platform.MinFreeDisk))
}

// envoyFinding finds Envoy as the data planes will and runs it once.
func envoyFinding(ctx context.Context) platform.Finding {
	f := platform.Finding{Check: "envoy"}
	fix := fmt.Sprintf("run scripts/setup.sh (Envoy %s into .venv), or set %s to an Envoy %s binary",
		dataplane.ExpectedEnvoy, dataplane.EnvoyEnv, dataplane.ExpectedEnvoy)
	bin, err := dataplane.FindEnvoy()
	if err != nil {
		f.Detail, f.Fix = strings.TrimPrefix(err.Error(), "envoy: "), fix
		return f
	}
	vctx, cancel := context.WithTimeout(ctx, envoyVersionTimeout)
	defer cancel()
	v, err := dataplane.EnvoyVersion(vctx, bin)
	switch {
	case err != nil:
		f.Detail, f.Fix = fmt.Sprintf("%s does not run: %v", bin, err), fix
	case !strings.HasPrefix(v, dataplane.ExpectedEnvoy+"."):
		f.Detail, f.Fix = fmt.Sprintf("%s is Envoy %s; the lab's data planes are written for %s", bin, v, dataplane.ExpectedEnvoy), fix
	default:
		f.OK, f.Detail = true, fmt.Sprintf("Envoy %s at %s", v, bin)
	}
	return f
}

// envoyReleaseFinding checks that the Envoy release a mesh names
// (proxy_version) is installed and runs; the fix installs it.
func envoyReleaseFinding(ctx context.Context, version string) platform.Finding {
	f := platform.Finding{Check: "envoy " + version}
	vctx, cancel := context.WithTimeout(ctx, 2*envoyVersionTimeout)
	defer cancel()
	bin, _, err := dataplane.EnvoyFor(vctx, version)
	switch {
	case errors.Is(err, dataplane.ErrReleaseMissing):
		f.Detail, f.Fix = fmt.Sprintf("a mesh names Envoy %s (proxy_version); it is not the default Envoy and is %v", version, dataplane.ErrReleaseMissing), dataplane.InstallCommand(version)
		return f
	case err != nil:
		f.Detail, f.Fix = err.Error(), dataplane.InstallCommand(version)
		return f
	}
	f.OK, f.Detail = true, fmt.Sprintf("Envoy %s at %s", version, bin)
	return f
}
