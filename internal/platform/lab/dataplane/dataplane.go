package dataplane

import (
	"context"
	"fmt"
	"sync"

	"github.com/meshbench/meshbench/internal/mesh"
)

// DataPlane is one family of lab data plane: how the profiles that name it
// (mesh.Profile.LabDataPlane) put pods in the mesh. The proxies it runs
// are containers of the lab's cluster, which the lab samples by role like
// every other container.
type DataPlane interface {
	// Install starts the data plane's proxies for the installation's
	// profile, and the ingress gateway, and steers the meshed pods'
	// traffic through them. What it starts is recorded on the
	// installation as it starts, so that a failed install is undone.
	Install(ctx context.Context, in *Installation) error
	// Checks are the checks only this data plane can make: that its
	// capture is in place and the proxy that takes each pod's traffic
	// runs. Installation.Verify runs them with the checks every data
	// plane shares.
	Checks(in *Installation) []func(context.Context) mesh.Check
	// Upstream is how the ingress gateway reaches a meshed pod: plain
	// HTTP when nothing meshes it, else through the data plane's mutual
	// TLS, which the shared checks then prove refuses plaintext and
	// carries the caller's identity.
	Upstream() upstreamMode
	// IdentityLogs say where a probe along e, carrying the nonce probe in
	// its header, leaves the identity the caller's side presented, and
	// whose it must be; the identity check reads them. Called under the
	// installation's lock; none for a data plane without mutual TLS.
	IdentityLogs(in *Installation, e edge, probe string) []identityLog
}

var (
	planesMu sync.RWMutex
	planes   = map[string]DataPlane{}
)

// Register makes a data plane known by the name profiles give it; a name
// already registered is an error.
func Register(name string, dp DataPlane) error {
	planesMu.Lock()
	defer planesMu.Unlock()
	if _, ok := planes[name]; ok {
		return fmt.Errorf("lab data plane %q is already registered", name)
	}
	planes[name] = dp
	return nil
}

func init() {
	for name, dp := range map[string]DataPlane{mesh.LabIstioSidecar: IstioSidecar{}, mesh.LabIstioAmbient: IstioAmbient{}} {
		if err := Register(name, dp); err != nil {
			panic(err)
		}
	}
}

// dataPlaneFor returns the data plane that installs a profile: none for
// the baseline, which runs the ingress gateway alone.
func dataPlaneFor(p mesh.Profile) (DataPlane, error) {
	if p.Mesh == "" {
		return noMesh{}, nil
	}
	planesMu.RLock()
	defer planesMu.RUnlock()
	dp, ok := planes[p.LabDataPlane]
	if !ok {
		return nil, fmt.Errorf("mesh profile %q: the lab has no data plane %q", p.Name, p.LabDataPlane)
	}
	return dp, nil
}

// noMesh is the baseline's data plane: the ingress gateway, no proxy in
// the workload's path.
type noMesh struct{}

func (noMesh) Install(ctx context.Context, in *Installation) error { return in.startIngress(ctx) }

func (noMesh) Checks(*Installation) []func(context.Context) mesh.Check { return nil }

func (noMesh) Upstream() upstreamMode { return plainUpstream }

func (noMesh) IdentityLogs(*Installation, edge, string) []identityLog { return nil }
