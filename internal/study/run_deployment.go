package study

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// runDeployment runs one independent deployment of the study: the
// platform brought up afresh (except for the run's first deployment,
// which setUp brought up), its own calibration where the study
// calibrates, its rounds' cells, then its noisy cells again, on the same
// deployment, so that every repetition of a deployment shares what it
// drew and no other's. A deployment whose cells are all done (a resumed
// run) is skipped.
func (r *runner) runDeployment(ctx context.Context, dep, rounds int) error {
	ids, err := newPlan(r.s, r.s.ScalingFor(r.o.Scale), rounds)
	if err != nil {
		return err
	}
	pending := slices.ContainsFunc(ids.Cells, func(c Cell) bool { return c.Deployment == dep && !r.done[c.ID] })
	noisy := slices.ContainsFunc(r.ix.Cells, func(s results.Summary) bool {
		return s.DeploymentOf() == dep && toRemeasure(s) && slices.ContainsFunc(ids.Cells, func(c Cell) bool { return c.ID == s.ID })
	})
	if !pending && (!noisy || *r.s.Noise.Retries == 0) {
		return nil
	}
	if r.deployed {
		if err := r.freshPlatform(ctx, dep); err != nil {
			return err
		}
	}
	r.deployed, r.dep = true, dep
	start := time.Now().UTC()
	sc, err := r.deploymentScaling(ctx, dep)
	if err != nil {
		return err
	}
	r.recordDeployment(results.Deployment{Index: dep, Start: start, Scaling: &sc})
	all, err := newPlan(r.s, sc, rounds)
	if err != nil {
		return err
	}
	plan := *all
	plan.Cells = slices.DeleteFunc(slices.Clone(all.Cells), func(c Cell) bool { return c.Deployment != dep })
	if err := r.writeIndex(); err != nil {
		return err
	}
	if err := r.execute(ctx, &plan); err != nil {
		return err
	}
	return r.rerunNoisy(ctx, &plan)
}

// freshPlatform takes the platform down and brings it up again, so that
// the next deployment has its own: on the lab new namespaces, cgroups and
// processes; on Kubernetes the workload and meshes installed anew.
func (r *runner) freshPlatform(ctx context.Context, dep int) error {
	r.printf("deployment %d of %d: bringing the platform up afresh\n", dep, r.s.DeploymentOf(r.s.Repetitions.Max))
	r.group, r.mesh, r.checks = 0, "", nil
	if err := r.p.Down(ctx); err != nil {
		return fmt.Errorf("platform %s: down before deployment %d: %w", r.s.Platform.Type, dep, err)
	}
	if err := r.p.Up(ctx, infra.ClusterSpec{Nodes: r.s.Platform.Nodes}); err != nil {
		return fmt.Errorf("platform %s: up for deployment %d: %w", r.s.Platform.Type, dep, err)
	}
	return nil
}

// deploymentScaling is the scaling a deployment's cells run at: the one
// it recorded (a resumed run keeps it, so that its cells match the ones
// already done), else the study's, calibrated on this deployment where
// the study calibrates. The first calibration measures every mesh, finds
// the slowest (the reference the fraction applies to) and, where the
// study asks, the app's work; later ones measure the reference alone,
// whose capacity alone sets the factor, with the work kept.
func (r *runner) deploymentScaling(ctx context.Context, dep int) (results.Scaling, error) {
	if d, ok := r.recorded(dep); ok && d.Scaling != nil {
		if r.o.Scale > 0 && (d.Scaling.Mode != results.ScaleFactor || d.Scaling.Factor != r.o.Scale) {
			return results.Scaling{}, fmt.Errorf("resume: the run started with scaling %q (factor %g); --scale cannot change it", d.Scaling.Mode, d.Scaling.Factor)
		}
		if d.Scaling.Work != nil && !r.workApplied {
			// The cells still to run burn what the finished ones did.
			r.s, _ = r.s.withWork(d.Scaling.Work.Scale)
			r.workApplied = true
		}
		return *d.Scaling, nil
	}
	sc := r.s.ScalingFor(r.o.Scale)
	if !needsCalibration(sc) {
		return sc, nil
	}
	meshes := r.s.calibrationMeshes()
	var work *results.WorkCalibration
	if first, ok := r.recorded(1); ok && dep > 1 && first.Scaling != nil && first.Scaling.Reference != "" {
		meshes = slices.DeleteFunc(meshes, func(m Mesh) bool { return m.Name != first.Scaling.Reference })
		work = first.Scaling.Work
	}
	caps, err := r.measureCapacities(ctx, meshes)
	if err != nil {
		return sc, err
	}
	if r.s.Scaling != nil && r.s.Scaling.CalibrateWork && work == nil {
		if work, caps, err = r.calibrateWork(ctx, caps); err != nil {
			return sc, err
		}
		r.workApplied = true
	}
	if sc, err = r.s.calibrate(sc, caps); err != nil {
		return sc, err
	}
	if sc.Work = work; sc.Work != nil {
		sc.Note = joinNote(workNote(sc.Work), sc.Note)
	}
	r.printf("calibrated deployment %d: capacity %s; load scaled by %.4g (%s)\n", dep, capacitiesText(caps), sc.Factor, sc.Note)
	r.log.Info("calibrated", "deployment", dep, "scaling", sc.Mode, "factor", sc.Factor, "tenant_rate", sc.TenantRate)
	return sc, nil
}

// recorded is the deployment the results record under dep; results from
// before schema 17 ran one, at the provenance's scaling.
func (r *runner) recorded(dep int) (results.Deployment, bool) {
	pv := r.ix.Provenance
	for _, d := range pv.Deployments {
		if d.Index == dep {
			return d, true
		}
	}
	if dep == 1 && len(pv.Deployments) == 0 && pv.Scaling != nil {
		return results.Deployment{Index: 1, Scaling: pv.Scaling}, true
	}
	return results.Deployment{}, false
}

// recordDeployment keeps a deployment in the provenance, in order; the
// first one's scaling is the provenance's, as older readers expect.
func (r *runner) recordDeployment(d results.Deployment) {
	pv := &r.ix.Provenance
	if i := slices.IndexFunc(pv.Deployments, func(x results.Deployment) bool { return x.Index == d.Index }); i >= 0 {
		d.Start = pv.Deployments[i].Start
		pv.Deployments[i] = d
	} else {
		pv.Deployments = append(pv.Deployments, d)
	}
	if d.Index == 1 || pv.Scaling == nil {
		pv.Scaling = d.Scaling
	}
}
