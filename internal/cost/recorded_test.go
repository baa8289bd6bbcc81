package cost

import (
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/resources"
)

func recordedComp(role metrics.Role, ns, pod, node string, milli, mib int64) metrics.Component {
	return metrics.Component{Role: role, Namespace: ns, Pod: pod, Node: node, Container: string(role), Requirements: resources.Requirements{CPURequestMilli: milli, MemRequestBytes: mib * MiB}}
}

// TestRecordedScenario checks that recorded pods are priced as they ran:
// every application pod in every namespace (not one namespace's times the
// count), each with its own sidecar (not the first or the largest), every
// waypoint that ran, and a per-node proxy once per node.
func TestRecordedScenario(t *testing.T) {
	t.Parallel()
	app := func(ns, pod string, milli, mib int64) metrics.Component {
		return recordedComp(metrics.RoleApp, ns, pod, "app-1", milli, mib)
	}
	sidecar := func(ns, pod string, milli, mib int64) metrics.Component {
		return recordedComp(metrics.RoleSidecar, ns, pod, "app-1", milli, mib)
	}
	// Three pods in ns-a, one in ns-b; one sidecar asks for more than the
	// others, and the load generator's is not the application's.
	pods := []metrics.Component{
		app("ns-a", "a1", 100, 100), sidecar("ns-a", "a1", 100, 128),
		app("ns-a", "a2", 100, 100), sidecar("ns-a", "a2", 100, 128),
		app("ns-a", "a3", 300, 0), sidecar("ns-a", "a3", 500, 256),
		app("ns-b", "b1", 100, 100), sidecar("ns-b", "b1", 100, 128),
		recordedComp(metrics.RoleLoad, "load", "load-job", "load-1", 50, 50), sidecar("load", "load-job", 100, 128),
		recordedComp(metrics.RoleControlPlane, "istio-system", "istiod", "mesh-1", 500, 2048),
	}
	appOwn := Resources{MilliCPU: 600, Bytes: 300 * MiB}
	tests := []struct {
		name       string
		comps      []metrics.Component
		wantPods   int
		wantSpread Resources // requested by the scheduled pods, per-node pods apart
		perNode    Resources // on every node
		sidecars   int       // kinds of sidecar described
	}{
		{
			name:       "sidecar mesh in two namespaces",
			comps:      pods,
			wantPods:   4 + 1,
			wantSpread: appOwn.Add(Resources{MilliCPU: 800, Bytes: 640 * MiB}).Add(Resources{MilliCPU: 500, Bytes: 2048 * MiB}),
			sidecars:   2,
		},
		{
			name: "node proxies and a waypoint per namespace",
			comps: []metrics.Component{
				app("ns-a", "a1", 100, 100), app("ns-a", "a2", 100, 100), app("ns-a", "a3", 300, 0), app("ns-b", "b1", 100, 100),
				recordedComp(metrics.RoleNodeProxy, "istio-system", "ztunnel-1", "app-1", 200, 512),
				recordedComp(metrics.RoleNodeProxy, "istio-system", "ztunnel-2", "load-1", 200, 512),
				recordedComp(metrics.RoleWaypoint, "ns-a", "waypoint-a", "app-1", 100, 128),
				recordedComp(metrics.RoleWaypoint, "ns-b", "waypoint-b", "app-1", 100, 128),
			},
			wantPods:   4 + 2,
			wantSpread: appOwn.Add(Resources{MilliCPU: 200, Bytes: 256 * MiB}),
			perNode:    Resources{MilliCPU: 200, Bytes: 512 * MiB},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recorded := recordedPods(tc.comps)
			base := recordedWorkload("w", recorded, false)
			s := recordedScenario("w", "mesh", recorded)
			rows, err := allocateAll(smallNode, []scenario{{w: base, f: Footprint{Name: mesh.ProfileBaseline}}, s})
			if err != nil {
				t.Fatal(err)
			}
			if rows[0].Pods != 4 || rows[0].Requests != appOwn {
				t.Errorf("baseline: %d pods asking %v, want 4 asking %v", rows[0].Pods, rows[0].Requests, appOwn)
			}
			r := rows[1]
			if want := tc.wantSpread.Add(tc.perNode.Times(r.Nodes)); r.Pods != tc.wantPods || r.Requests != want {
				t.Errorf("mesh: %d pods asking %v, want %d asking %v", r.Pods, r.Requests, tc.wantPods, want)
			}
			if len(s.sidecars) != tc.sidecars {
				t.Errorf("sidecars described: %+v, want %d kinds", s.sidecars, tc.sidecars)
			}
		})
	}
}
