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
	}
	return out, nil
}
