package lab

import (
	"context"
	"fmt"

	"github.com/meshbench/meshbench/internal/platform"
)

// meshDriver installs one mesh profile on the lab and removes it. The
// mesh*.go files of this package provide it by setting newMeshDriver from
// an init function; this file stays the same whatever meshes exist.
type meshDriver interface {
	// Install installs the profile on the deployed workload (p.lab, p.wl)
	// and runs its checks.
	Install(ctx context.Context, m platform.MeshSpec) ([]platform.Check, error)
	// Remove undoes Install, leaving the workload as Deploy made it.
	Remove(ctx context.Context) error
	// IngressURL is where load for a namespace enters through the
	// ingress gateway, for platform.PathIngress.
	IngressURL(namespace string) (string, error)
}

// newMeshDriver makes the driver of a profile for a platform; nil until a
// mesh*.go file sets it.
var newMeshDriver func(p *labPlatform, profile string) (meshDriver, error)

// InstallMesh implements platform.Platform. Without a mesh driver built
// in, only the baseline (no mesh) is available.
func (p *labPlatform) InstallMesh(ctx context.Context, m platform.MeshSpec) ([]platform.Check, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.running(); err != nil {
		return nil, err
	}
	if p.wl == nil {
		return nil, fmt.Errorf("install mesh %s: deploy the workload first", m.Profile)
	}
	if p.msh != nil {
		return nil, fmt.Errorf("install mesh %s: a mesh is installed; remove it first", m.Profile)
	}
	if newMeshDriver == nil {
		if m.Profile == "" || m.Profile == "baseline" {
			return nil, nil
		}
		return nil, fmt.Errorf("mesh profile %q: this build of the lab has no mesh installer", m.Profile)
	}
	d, err := newMeshDriver(p, m.Profile)
	if err != nil {
		return nil, err
	}
	// Recorded even when Install fails, so RemoveMesh and Down undo
	// whatever part of it was done.
	p.msh = d
	checks, err := d.Install(ctx, m)
	if err != nil {
		return checks, err
	}
	// The ingress path's clients are checked wherever a gateway runs: the
	// path is meant to start outside the mesh.
	if _, ierr := d.IngressURL(p.wl.namespaces[0]); ierr == nil {
		l, _ := p.running()
		c := checkOutsideClients(l, p.wl.namespaces)
		checks = append(checks, c)
		if !c.Pass {
			return checks, fmt.Errorf("verification failed: %s", platform.FailedChecks([]platform.Check{c}))
		}
	}
	return checks, nil
}

// RemoveMesh implements platform.Platform.
func (p *labPlatform) RemoveMesh(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.msh == nil {
		return nil
	}
	err := p.msh.Remove(ctx)
	p.msh = nil
	return err
}
