package lab

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/study"
)

// A throwaway mesh, added as any new mesh is added to the lab: one
// registry entry (a second Istio-style sidecar family with a container
// name and default resources of its own) and one data-plane
// implementation. Nothing else in the tree knows it.
var (
	throwawayFamily = mesh.Family{
		Name: "throwaway", SidecarContainer: "throwaway-proxy", Workers: 1, SMPType: "THROWAWAY",
		Proxy: resources.Requirements{CPURequestMilli: 150, CPULimitMilli: 1500, MemRequestBytes: 96 << 20, MemLimitBytes: 768 << 20},
	}
	throwawayProfile  = mesh.Profile{Name: "throwaway-sidecar", Plane: mesh.PlaneSidecar, LabDataPlane: "throwaway-sidecar", Platforms: []string{infra.Lab}}
	registerThrowaway sync.Once
)

// throwawaySidecar is the throwaway mesh's data plane: an Istio-style
// sidecar, which takes its container's name and size from the family.
type throwawaySidecar struct{ dataplane.IstioSidecar }

func TestIntegrationThrowawayMesh(t *testing.T) {
	needLab(t)
	registerThrowaway.Do(func() {
		if err := mesh.Register(throwawayFamily, throwawayProfile); err != nil {
			t.Fatal(err)
		}
		if err := dataplane.Register(throwawayProfile.LabDataPlane, throwawaySidecar{}); err != nil {
			t.Fatal(err)
		}
	})
	src := []byte(`apiVersion: meshbench.dev/v1alpha1
kind: Study
name: throwaway
workload:
  graph: tiered
meshes:
- profile: baseline
- profile: throwaway-sidecar
load:
  rate: 50
  connections: 4
  duration: 2s
  warmup: 1s
repetitions: 1
`)
	st, err := study.Parse(src, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "run")
	// A 0755 base, not t.TempDir's 0700: the sidecar user must get through.
	prefix := testPrefix()
	base, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, err := study.Run(ctx, study.Options{
		Study: st, Source: src, Dir: dir, Version: "test",
		Open: func(_ context.Context, _ study.Platform, log *slog.Logger, podLogDir confined.Dir) (platform.Platform, error) {
			return New(Options{Name: prefix, Prefix: prefix, StateDir: filepath.Join(base, "state"), LogDir: podLogDir, Logger: log}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ran bool
	for _, s := range ix.Cells {
		// A distorted cell still ran on the installed, verified mesh: a
		// busy shared host can saturate the generator's CPU.
		if s.Status != results.StatusOK && s.Status != results.StatusDistorted {
			t.Fatalf("cell %s (%s): %s: %s", s.ID, s.Mesh, s.Status, s.Reason)
		}
		if s.Profile != throwawayProfile.Name {
			continue
		}
		ran = true
		if !mesh.MTLSProven(s.Verification) || s.Requests == 0 || s.Errors != 0 {
			t.Errorf("throwaway cell %s: mTLS proven %v, %d requests, %d errors", s.ID, mesh.MTLSProven(s.Verification), s.Requests, s.Errors)
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		sidecars := 0
		for _, r := range c.Resources {
			if r.Component.Role != metrics.RoleSidecar {
				continue
			}
			sidecars++
			if r.Component.Container != throwawayFamily.SidecarContainer || r.Component.Requirements != throwawayFamily.Proxy {
				t.Errorf("sidecar in %s/%s: container %q with %+v, want %q with the family's %+v", r.Component.Namespace, r.Component.Pod,
					r.Component.Container, r.Component.Requirements, throwawayFamily.SidecarContainer, throwawayFamily.Proxy)
			}
		}
		if sidecars == 0 {
			t.Error("the throwaway mesh's cell sampled no sidecar")
		}
	}
	if !ran {
		t.Fatalf("no cell of the throwaway mesh in %+v", ix.Cells)
	}
}
