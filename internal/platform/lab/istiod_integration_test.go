package lab

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/testenv"
)

// TestIntegrationMeshIstiodSidecar runs the sidecar profiles with real
// istiod configuring every sidecar through the xDS relay: the same checks
// as meshbench's own configuration must pass, and the sidecars must run
// istiod's listeners and clusters having rejected none of its updates.
// Without istiod's build or the API server it fails under
// MESHBENCH_REQUIRE_INTEGRATION=1, as CI runs it.
func TestIntegrationMeshIstiodSidecar(t *testing.T) {
	// istiod's defaults include metadata exchange, which upstream Envoy
	// lacks: the relay must have changed it.
	testIstiodProfiles(t, []string{mesh.ProfileSidecar, mesh.ProfileSidecarL7Policy}, "istio.metadata_exchange")
}

// TestIntegrationMeshIstiodWaypoint runs the waypoint profiles with real
// istiod configuring the waypoints (the node proxies keep meshbench's
// configuration): HBONE from the node proxies through istiod's waypoints
// must carry every call with the callers' identities, and the waypoints
// must run istiod's configuration having rejected none of it.
func TestIntegrationMeshIstiodWaypoint(t *testing.T) {
	// A waypoint's CONNECT termination keeps the peer in istiod's own
	// filter-state type, which upstream Envoy lacks: the relay must have
	// changed it.
	testIstiodProfiles(t, []string{mesh.ProfileAmbientWaypoint, mesh.ProfileWaypointL7Policy}, "istio.hashable_string")
}

// testIstiodProfiles installs each profile under istiod, wanting every
// check to pass and the relay to have changed the named extension.
func testIstiodProfiles(t *testing.T, profiles []string, changed string) {
	testenv.Integration(t)
	err := dataplane.IstiodPrerequisites()
	testenv.Need(t, err == nil, "istiod and the local API server (scripts/istiod-build.sh, scripts/k8s-testbin.sh): %v", err)
	m := newMeshLab(t)
	all := []string{dataplane.CheckConfig, dataplane.CheckReady, dataplane.CheckMeshed, dataplane.CheckPlaintext,
		dataplane.CheckIdentity, dataplane.CheckIngress, dataplane.CheckIstiodConfig}
	for _, profile := range profiles {
		if !slices.Contains(mesh.IstiodProfiles, profile) {
			t.Fatalf("istiod does not configure %s", profile)
		}
		t.Run(profile, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			spec := mesh.MeshSpec{Profile: profile, ControlPlane: mesh.ControlPlaneIstiod}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			in, checks, err := dataplane.Install(ctx, m.c, spec, dataplane.Options{Dir: m.dir, Logger: log})
			for _, c := range checks {
				t.Logf("%s %s: pass=%v %s %v", profile, c.Name, c.Pass, c.Detail, c.Facts)
			}
			if err != nil {
				t.Fatalf("install %s under istiod: %v", profile, err)
			}
			removed := false
			defer func() {
				if !removed {
					m.remove(t, in)
				}
			}()
			// istiod is a pod of the lab, measured as the control plane: on
			// the load node (this lab has no mesh node), in a cgroup of its
			// own, gone with the mesh.
			pod, ok := m.l.Pod("istio-system", "istiod")
			if !ok || pod.Node != "load" || len(pod.Containers) != 1 || pod.Containers[0].Role != metrics.RoleControlPlane || !pod.Containers[0].Running {
				t.Errorf("istiod's pod %+v (found %v), want one running control-plane container on node load", pod, ok)
			}
			want := all
			if p, _ := mesh.LookupProfile(profile); p.L4Policy || p.L7Policy {
				want = append(want, dataplane.CheckAllowed, dataplane.CheckDenied)
			}
			wantChecks(t, checks, want, nil)
			facts := checkNamed(t, checks, dataplane.CheckIstiodConfig).Facts
			if !strings.HasPrefix(facts["istiod"], "v0.0.0-") {
				t.Errorf("istiod's version not recorded: %v", facts)
			}
			if !strings.Contains(facts["xds_relay_changes"], changed) {
				t.Errorf("relay changes: %q, want %s among them", facts["xds_relay_changes"], changed)
			}
			m.remove(t, in)
			removed = true
			if _, ok := m.l.Pod("istio-system", "istiod"); ok {
				t.Error("istiod's pod outlived the mesh")
			}
		})
	}
}
