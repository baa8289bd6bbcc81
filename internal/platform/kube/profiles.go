package kube

import (
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
)

// profile is a registry profile with what installing it on Kubernetes
// takes.
type profile struct {
	mesh.Profile
	Proxy     string // the sidecar container's name
	Restarts  bool   // pods must be re-created to join or leave
	MTLSProbe bool   // a plaintext probe from outside must fail
	// ProxyUID is the sidecar's user, whose traffic the pod's own
	// redirect lets out past the proxy (Istio's 1337, Linkerd's 2102, as
	// their charts install them); 0 when the mesh has no such bypass.
	ProxyUID int64
}

// lookupProfile returns the named profile if Kubernetes runs it.
func lookupProfile(name string) (profile, error) {
	pr, err := mesh.ProfileOn(name, infra.Kubernetes)
	if err != nil {
		return profile{}, err
	}
	out := profile{Profile: pr, MTLSProbe: pr.Mesh != ""}
	if pr.Sidecars() {
		out.Proxy, out.Restarts = pr.Family().SidecarContainer, true
		out.ProxyUID = proxyUIDs[pr.Mesh]
	}
	return out, nil
}

// proxyUIDs are the sidecar meshes' proxy users, as their charts'
// defaults set them and their init containers exempt from redirection.
var proxyUIDs = map[string]int64{mesh.Istio: 1337, mesh.Linkerd: 2102}
