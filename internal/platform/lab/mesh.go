package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
)

// labMesh is an installed mesh: internal/platform/lab/dataplane's real
// Envoy, configured as Istio configures it, on the platform's lab.
type labMesh struct {
	p  *labPlatform
	in *dataplane.Installation
}

func newLabMesh(p *labPlatform, profile string) (*labMesh, error) {
	if _, err := dataplane.SettingsFor(mesh.MeshSpec{Profile: profile}); err != nil {
		return nil, err
	}
	return &labMesh{p: p}, nil
}

// Install installs the profile on the deployed workload (p.lab, p.wl)
// and runs its checks. The caller holds p.mu.
func (d *labMesh) Install(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	c := &meshCluster{l: d.p.lab, g: d.p.wl.w.Graph}
	in, checks, err := dataplane.Install(ctx, c, m, dataplane.Options{
		Dir:    filepath.Join(d.p.lab.StateDir(), "mesh"),
		Logger: d.p.o.Logger,
	})
	d.in = in
	return checks, err
}

// Remove undoes Install, leaving the workload as Deploy made it.
func (d *labMesh) Remove(ctx context.Context) error {
	if d.in == nil {
		return nil
	}
	return d.in.Remove(ctx)
}

// IngressURL is where load for a namespace enters through the ingress
// gateway, for infra.PathIngress.
func (d *labMesh) IngressURL(namespace string) (string, error) {
	if d.in == nil {
		return "", errors.New("no mesh installed")
	}
	return d.in.IngressURL(namespace, d.p.wl.w.Graph.EntryPath)
}

// InstallMesh implements platform.Platform.
func (p *labPlatform) InstallMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
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
	d, err := newLabMesh(p, m.Profile)
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
			return checks, fmt.Errorf("verification failed: %s", mesh.FailedChecks([]mesh.Check{c}))
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
