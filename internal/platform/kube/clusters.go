package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// clusters is a study spanning several clusters of one kubeconfig: each
// mesh runs on the cluster its context names, so that a mesh owning a
// cluster's network (Cilium) is measured on the cluster that runs it while
// the others run elsewhere. Every cluster gets the same nodes and
// workload; the runner's cells, interleaved across meshes, are therefore
// interleaved across clusters too. Measure and RemoveMesh act on the
// cluster of the mesh last installed.
type clusters struct {
	contexts []string // in the study's order; the first is the study's own
	by       map[string]platform.Platform
	meshCtx  func(mesh.MeshSpec) string
	current  platform.Platform // where the installed mesh is; nil for none
}

var _ platform.Platform = (*clusters)(nil)

func newClusters(contexts []string, by map[string]platform.Platform, meshCtx func(mesh.MeshSpec) string) *clusters {
	return &clusters{contexts: contexts, by: by, meshCtx: meshCtx}
}

// Info reports the first cluster's facts, and every cluster's versions
// under "<context>/<component>".
func (c *clusters) Info(ctx context.Context) (infra.Info, error) {
	var info infra.Info
	for i, name := range c.contexts {
		in, err := c.by[name].Info(ctx)
		if err != nil {
			return infra.Info{}, fmt.Errorf("context %q: %w", name, err)
		}
		if i == 0 {
			info = in
			info.Versions = map[string]string{}
		}
		for k, v := range in.Versions {
			info.Versions[name+"/"+k] = v
		}
	}
	return info, nil
}

// Up checks every cluster: its nodes, and the meshes it will host.
func (c *clusters) Up(ctx context.Context, spec infra.ClusterSpec) error {
	return c.each(func(p platform.Platform) error { return p.Up(ctx, spec) })
}

// Deploy deploys the workload on every cluster, so that each mesh's
// cells find it where they run.
func (c *clusters) Deploy(ctx context.Context, w platform.Workload) error {
	return c.each(func(p platform.Platform) error { return p.Deploy(ctx, w) })
}

// InstallMesh installs the mesh on its cluster, after removing the mesh
// installed on another.
func (c *clusters) InstallMesh(ctx context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	p, ok := c.by[c.meshCtx(m)]
	if !ok {
		return nil, fmt.Errorf("kubernetes: mesh %s names context %q, which the study did not open", m.Profile, c.meshCtx(m))
	}
	if c.current != nil && c.current != p {
		if err := c.current.RemoveMesh(ctx); err != nil {
			return nil, err
		}
	}
	c.current = p
	return p.InstallMesh(ctx, m)
}

// RemoveMesh removes the installed mesh from its cluster.
func (c *clusters) RemoveMesh(ctx context.Context) error {
	if c.current == nil {
		return nil
	}
	return c.current.RemoveMesh(ctx)
}

// Measure measures on the cluster of the installed mesh.
func (c *clusters) Measure(ctx context.Context, spec infra.LoadSpec) (platform.Measurement, error) {
	if c.current == nil {
		return platform.Measurement{}, errors.New("kubernetes: measure before a mesh is installed: no cluster is chosen")
	}
	return c.current.Measure(ctx, spec)
}

// Down removes what meshbench made on every cluster, going on past a
// failure so that one cluster's trouble leaves no other behind.
func (c *clusters) Down(ctx context.Context) error {
	var errs []error
	for _, name := range c.contexts {
		if err := c.by[name].Down(ctx); err != nil {
			errs = append(errs, fmt.Errorf("context %q: %w", name, err))
		}
	}
	c.current = nil
	return errors.Join(errs...)
}

// each runs f on every cluster in order, naming the one that failed.
func (c *clusters) each(f func(platform.Platform) error) error {
	for _, name := range c.contexts {
		if err := f(c.by[name]); err != nil {
			return fmt.Errorf("context %q: %w", name, err)
		}
	}
	return nil
}
