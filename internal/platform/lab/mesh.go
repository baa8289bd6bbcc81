package lab

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
)

// The lab's meshes are internal/platform/lab/dataplane's profiles: real Envoy configured as
// Istio configures it.
func init() { newMeshDriver = newLabMesh }

// labMesh drives internal/platform/lab/dataplane on the platform's lab.
type labMesh struct {
	p  *labPlatform
	in *dataplane.Installation
}

func newLabMesh(p *labPlatform, profile string) (meshDriver, error) {
	if _, err := dataplane.SettingsFor(platform.MeshSpec{Profile: profile}); err != nil {
		return nil, err
	}
	return &labMesh{p: p}, nil
}

// Install implements meshDriver. The caller holds p.mu.
func (d *labMesh) Install(ctx context.Context, m platform.MeshSpec) ([]platform.Check, error) {
	c := &meshCluster{l: d.p.lab, g: d.p.wl.w.Graph}
	in, checks, err := dataplane.Install(ctx, c, m, dataplane.Options{
		Dir:    filepath.Join(d.p.lab.StateDir(), "mesh"),
		Logger: d.p.o.Logger,
	})
	d.in = in
	return checks, err
}

// Remove implements meshDriver.
func (d *labMesh) Remove(ctx context.Context) error {
	if d.in == nil {
		return nil
	}
	return d.in.Remove(ctx)
}

// IngressURL implements meshDriver.
func (d *labMesh) IngressURL(namespace string) (string, error) {
	if d.in == nil {
		return "", errors.New("no mesh installed")
	}
	return d.in.IngressURL(namespace, d.p.wl.w.Graph.EntryPath)
}
