package study

import (
	"context"
	"fmt"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// execute runs the plan's cells that are not done yet, writing each as it
// finishes, and tells the study's progress (r.prog). It returns early
// only when ctx ends.
func (r *runner) execute(ctx context.Context, plan *Plan) error {
	prog := r.prog
	for _, c := range plan.Cells {
		if r.done[c.ID] {
			continue
		}
		i := prog.index(c.ID)
		r.printf("%s\n", prog.start(i, c))
		cell, err := r.runCell(ctx, c)
		if err != nil {
			return err
		}
		if err := results.WriteCell(r.dir, cell); err != nil {
			return fmt.Errorf("results: %w", err)
		}
		r.ix.Cells = append(r.ix.Cells, cell.Summary)
		r.done[c.ID] = true
		if err := r.writeIndex(); err != nil {
			return err
		}
		r.printf("%s\n", prog.finish(i, c, cell.Summary))
	}
	return nil
}

// runCell deploys, installs and measures one cell, reusing what the
// previous cell left when it fits. A failure becomes a failed cell; only
// the context ending returns an error, and then the cell is not recorded.
func (r *runner) runCell(ctx context.Context, c Cell) (*results.Cell, error) {
	cell, _, err := r.measureCell(ctx, c)
	return cell, err
}

// measureCell is runCell that also returns the generators' results as the
// engine gave them, nil when nothing was measured.
func (r *runner) measureCell(ctx context.Context, c Cell) (*results.Cell, []load.Result, error) {
	start := time.Now().UTC()
	cell := &results.Cell{
		Summary: results.Summary{
			ID: c.ID, File: results.CellFile(c.ID), Mesh: c.Mesh.Name, Profile: c.Mesh.Profile, Params: c.Params,
			Repetition: c.Repetition, Deployment: c.Deployment, Verification: []mesh.Check{},
		},
		MeshSpec: c.Mesh.MeshSpec, Load: results.LoadOf(c.Load),
	}
	cell.Platform = r.cellPlatform
	fail := func(format string, args ...any) (*results.Cell, []load.Result, error) {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		cell.Status, cell.Reason = results.StatusFailed, fmt.Sprintf(format, args...)
		cell.Start, cell.End = start, time.Now().UTC()
		r.log.Debug("cell failed", "cell", c.ID, "reason", cell.Reason)
		return cell, nil, nil
	}
	if err := r.deploy(ctx, c); err != nil {
		return fail("%v", err)
	}
	if err := r.install(ctx, c); err != nil {
		cell.Verification = r.checks
		return fail("%v", err)
	}
	cell.Verification = r.checks
	r.log.Debug("measuring", "cell", c.ID)
	spec, err := r.withLogDir(c)
	if err != nil {
		return nil, nil, err
	}
	m, err := r.p.Measure(ctx, spec)
	if err != nil {
		return fail("measure: %v", err)
	}
	record(cell, m, r.s.Noise.Threshold, *r.s.MaxErrorRate)
	cell.Attempt = 1
	r.noteNoise(m.Host, "")
	return cell, m.Generators, nil
}

// withLogDir is a cell's load with the directory for its measurement's
// logs, so that a failed cell's reason points at files in the results.
// The directory is made here, refusing a link on the way, so that the
// platform writes its files into a plain directory of the results.
func (r *runner) withLogDir(c Cell) (infra.LoadSpec, error) {
	l := c.Load
	l.LogDir = confined.Dir{Root: r.dir, Name: results.CellLogDir(c.ID)}
	if err := l.LogDir.Mkdir(); err != nil {
		return l, fmt.Errorf("results: %w", err)
	}
	return l, nil
}

// deploy makes the cell's workload shape the deployed one. A group whose
// deployment failed fails its other cells without trying again.
func (r *runner) deploy(ctx context.Context, c Cell) error {
	if r.group == c.Group {
		return nil
	}
	if err := r.groupErr[c.Group]; err != nil {
		return err
	}
	if err := r.removeMesh(ctx); err != nil {
		return err
	}
	r.log.Debug("deploying the workload", "group", c.Group, "namespaces", c.Namespaces, "replicas", c.Replicas)
	r.group = 0
	if err := r.p.Deploy(ctx, r.s.WorkloadOf(c)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.groupErr[c.Group] = fmt.Errorf("deploy the workload: %w", err)
		return r.groupErr[c.Group]
	}
	r.group = c.Group
	return nil
}

// install makes the cell's mesh the installed one and keeps its
// verification checks for the cells that run on it.
func (r *runner) install(ctx context.Context, c Cell) error {
	if r.mesh == c.Mesh.Name {
		return nil
	}
	if err := r.removeMesh(ctx); err != nil {
		return err
	}
	r.log.Debug("installing mesh", "mesh", c.Mesh.Name, "profile", c.Mesh.Profile)
	checks, err := r.p.InstallMesh(ctx, c.Mesh.MeshSpec)
	r.checks = checks
	if r.checks == nil {
		r.checks = []mesh.Check{}
	}
	if err != nil {
		// Leave no half-installed mesh for the next cell.
		if rerr := r.p.RemoveMesh(ctx); rerr != nil {
			r.log.Warn("remove a mesh that failed to install", "mesh", c.Mesh.Name, "err", rerr)
		}
		return fmt.Errorf("install mesh %s: %w", c.Mesh.Name, err)
	}
	r.mesh = c.Mesh.Name
	r.recordConfigHash(c.Mesh.Name, checks)
	return nil
}

// recordConfigHash keeps the data plane's configuration hash and Envoy
// release, which a check of the installed mesh carries, in the results'
// provenance; each cell's verification keeps its own.
func (r *runner) recordConfigHash(name string, checks []mesh.Check) {
	for _, c := range checks {
		if c.ConfigHash == "" {
			continue
		}
		if r.ix.Provenance.EnvoyConfigHashes == nil {
			r.ix.Provenance.EnvoyConfigHashes = map[string]string{}
		}
		r.ix.Provenance.EnvoyConfigHashes[name] = c.ConfigHash
	}
	if v := mesh.EnvoyVersion(checks); v != "" {
		if r.ix.Provenance.EnvoyVersions == nil {
			r.ix.Provenance.EnvoyVersions = map[string]string{}
		}
		r.ix.Provenance.EnvoyVersions[name] = v
	}
}

// removeMesh removes the installed mesh, if any. When that fails the
// workload is deployed afresh before the next cell.
func (r *runner) removeMesh(ctx context.Context) error {
	if r.mesh == "" {
		return nil
	}
	name := r.mesh
	r.mesh, r.checks = "", nil
	if err := r.p.RemoveMesh(ctx); err != nil {
		r.group = 0
		return fmt.Errorf("remove mesh %s: %w", name, err)
	}
	return nil
}
