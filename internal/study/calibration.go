package study

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

// calibrateWork scales the workload's work so that the app costs what the
// study's cost relative to its proxies (see calibration_work.go), from capacities
// measured with the configured work, and measures the capacities again
// with the new work: those scale the load, and give the shares reached.
func (r *runner) calibrateWork(ctx context.Context, caps map[string]float64) (*results.WorkCalibration, map[string]float64, error) {
	meshes := r.s.calibrationMeshes()
	i := slices.IndexFunc(meshes, func(m Mesh) bool { return m.Profile == BaselineProfile })
	c, err := r.s.calibrationCell(meshes[i]) // calibrationMeshes has a baseline
	if err != nil {
		return nil, nil, err
	}
	study, err := r.s.studyShares(c.Params)
	if err != nil {
		return nil, nil, err
	}
	base := c.Mesh.Name
	w, err := calibrateWork(study, caps, base, r.s.appCPUs(), workPerRequest(r.s.Graph, c.Replicas))
	if err != nil {
		return nil, nil, err
	}
	r.s, w.WorkMs = r.s.withWork(w.Scale)
	r.printf("calibrated the app's cost: %s\n", workNote(w))
	r.log.Info("calibrated the app's cost", "scale", w.Scale, "target_app_ms", w.TargetAppMs)
	r.group = 0 // deploy the workload again, with its new work
	after, err := r.measureCapacities(ctx, r.s.calibrationMeshes())
	if err != nil {
		return nil, nil, err
	}
	w.SharesAfter = labShares(after, base, study)
	return w, after, nil
}

// appCPUs is how many CPUs the app node has: its CPU list, or the host's
// when it floats.
func (s *Study) appCPUs() int {
	for _, n := range s.Platform.Nodes {
		if n.Role != infra.NodeApp || n.CPUs == "" {
			continue
		}
		if cpus, err := infra.ParseCPUList(n.CPUs); err == nil && len(cpus) > 0 {
			return len(cpus)
		}
	}
	return runtime.NumCPU()
}

// needsCalibration reports whether a scaling waits for the meshes'
// capacities to be measured.
func needsCalibration(sc results.Scaling) bool {
	switch sc.Mode {
	case results.ScaleCalibrated:
		return sc.Factor == 0
	case results.ScaleTenants:
		return sc.TenantRate == 0
	}
	return false
}

// calibrationMeshes are the meshes whose capacity calibration measures:
// the study's, and the baseline first when the study has none.
func (s *Study) calibrationMeshes() []Mesh {
	meshes := slices.Clone(s.Meshes)
	if !slices.ContainsFunc(meshes, func(m Mesh) bool { return m.Profile == BaselineProfile }) {
		meshes = append([]Mesh{{Name: BaselineProfile, MeshSpec: mesh.MeshSpec{Profile: BaselineProfile}}}, meshes...)
	}
	return meshes
}

// measureCapacities runs, for each of the meshes, the closed loop that
// finds its capacity in requests served per second, on the first workload
// shape, which it leaves deployed. A mesh that fails here is left out
// (its cells will fail on their own); only the baseline failing is an
// error, for then nothing can be scaled.
func (r *runner) measureCapacities(ctx context.Context, meshes []Mesh) (map[string]float64, error) {
	caps := map[string]float64{}
	for i, m := range meshes {
		c, err := r.s.calibrationCell(m)
		if err != nil {
			return nil, err
		}
		if r.dep > 1 {
			// Its logs beside the first deployment's, not over them.
			c.ID = fmt.Sprintf("calibration-d%d-%s", r.dep, m.Name)
		}
		if i == 0 {
			o := c.Load.Options
			r.printf("calibrating: the closed-loop capacity of %d meshes (%d connections per generator, %s each, after a warm-up of %s, or up to %s while the throughput still rises)\n",
				len(meshes), o.Connections, o.Duration, o.Warmup, o.WarmupMax)
		}
		if r.group != c.Group {
			if err := r.p.Deploy(ctx, r.s.WorkloadOf(c)); err != nil {
				return nil, fmt.Errorf("calibration: deploy: %w", err)
			}
			r.group = c.Group
		}
		capacity, err := r.measureCapacity(ctx, c)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && m.Profile == BaselineProfile:
			return nil, fmt.Errorf("calibration: %s: %w", m.Name, err)
		case err != nil:
			r.printf("calibration: %s left out: %v\n", m.Name, err)
			r.log.Warn("calibration: mesh left out", "mesh", m.Name, "err", err)
		default:
			caps[m.Name] = capacity
		}
	}
	return caps, nil
}

// measureCapacity measures one mesh's capacity. A measurement the host
// spoiled is made again once the host is quiet, up to the noise guard's
// retries, and the highest capacity kept: contention only lowers a
// closed loop's throughput, and every cell's load is scaled from these.
func (r *runner) measureCapacity(ctx context.Context, c Cell) (float64, error) {
	var best float64
	var host *infra.HostCPU
	for attempt := 0; ; attempt++ {
		capacity, h, err := r.measureCapacityOnce(ctx, c)
		if err != nil {
			return 0, err
		}
		if capacity > best {
			best, host = capacity, h
		}
		if h == nil || !results.Noisy(h, r.s.Noise.Threshold) || attempt >= *r.s.Noise.Retries {
			break
		}
		r.printf("calibration: %s measured on a noisy host (%s): %.1f req/s; measuring again (%d of %d)\n",
			c.Mesh.Name, r.hostText(h), capacity, attempt+1, *r.s.Noise.Retries)
		if err := r.waitQuiet(ctx); err != nil {
			return 0, err
		}
	}
	r.noteNoise(host, c.Mesh.Name)
	return best, nil
}

// measureCapacityOnce installs one mesh, measures, and removes the mesh:
// the cells install their meshes afresh.
func (r *runner) measureCapacityOnce(ctx context.Context, c Cell) (float64, *infra.HostCPU, error) {
	spec, err := r.withLogDir(c)
	if err != nil {
		return 0, nil, err
	}
	if _, err := r.p.InstallMesh(ctx, c.Mesh.MeshSpec); err != nil {
		if rerr := r.p.RemoveMesh(ctx); rerr != nil {
			r.group = 0
		}
		return 0, nil, fmt.Errorf("install: %w", err)
	}
	m, err := r.p.Measure(ctx, spec)
	if rerr := r.p.RemoveMesh(ctx); rerr != nil {
		r.log.Warn("calibration: remove mesh", "mesh", c.Mesh.Name, "err", rerr)
		r.group = 0 // deploy afresh before the first cell
	}
	if err != nil {
		return 0, nil, fmt.Errorf("measure: %w", err)
	}
	// Capacity counts the requests served: errors can come back faster than
	// answers, and a rate of failures is no capacity.
	merged := merge(m.Generators)
	if merged == nil || merged.Requests <= merged.Errors {
		return 0, nil, fmt.Errorf("no request succeeded")
	}
	capacity := merged.AchievedRate * float64(merged.Requests-merged.Errors) / float64(merged.Requests)
	r.log.Debug("calibrated", "mesh", c.Mesh.Name, "capacity_rps", capacity, "generators", len(m.Generators), "errors", merged.Errors, "warmed_up", merged.WarmedUp)
	for _, w := range merged.Warnings {
		r.log.Warn("calibration", "mesh", c.Mesh.Name, "warning", w)
	}
	return capacity, m.Host, nil
}

func capacitiesText(caps map[string]float64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(caps)) {
		parts = append(parts, fmt.Sprintf("%s %.1f", name, caps[name]))
	}
	return strings.Join(parts, ", ") + " req/s"
}
