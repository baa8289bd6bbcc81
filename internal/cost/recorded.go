package cost

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
)

// RecordedAllocation packs the requests a study recorded at one
// configuration onto nodes of machine type m, every pod as it ran, in
// every namespace: for the baseline, the application's pods (from the
// baseline's representative cell, or without a usable one the first
// mesh's, sidecars left off); for each other mesh, its own application
// pods each with its own sidecar, and its per-node proxies, control plane
// and waypoints. Both `meshbench cost --results` and the report price
// requests with it. It returns nil when the results hold no application
// pods.
func RecordedAllocation(d *analysis.Dataset, cfg analysis.LoadConfig, m MachineType, pricesNote string) (*AllocationEstimate, error) {
	name := d.Index.Study + " as recorded"
	var base Workload
	var runs []scenario
	for _, meshName := range d.Meshes {
		g := d.Group(meshName, cfg)
		if g == nil || g.Representative() == nil {
			continue
		}
		pods := recordedPods(g.Representative().Components)
		if runs == nil {
			base = recordedWorkload(name, pods, false)
			runs = []scenario{{w: base, f: Footprint{Name: mesh.ProfileBaseline}}}
		}
		if meshName != d.Baseline {
			runs = append(runs, recordedScenario(name, meshName, pods))
		}
	}
	if len(base.Pods) == 0 {
		return nil, nil
	}
	rows, err := allocateAll(m, runs)
	if err != nil {
		return nil, err
	}
	if d.Baseline != "" {
		rows[0].Mesh = d.Baseline
	}
	as, err := assumptions(base, m, pricesNote, runs, nil)
	if err != nil {
		return nil, err
	}
	if requestsNothing(base) {
		as = append(as, "the application's pods request nothing: only their count and the meshes' own requests fill the nodes")
	}
	as = append(as, "not counted either: ingress gateways, which the baseline runs too")
	return &AllocationEstimate{
		Title:       fmt.Sprintf("Recorded requests at %s, packed onto %s (%s)", cfg.Label(), m.Name, m.Provider),
		Assumptions: as,
		Rows:        rows,
	}, nil
}

// recordedPod is one pod's summed container requests: its own containers'
// and its sidecar's apart.
type recordedPod struct {
	name       string
	role       metrics.Role // of its containers that are not the sidecar
	own        Resources
	sidecar    Resources
	hasSidecar bool
}

// recordedPods sums each pod's containers' requests, in the order the pods
// were recorded.
func recordedPods(cs []metrics.Component) []recordedPod {
	index := map[[2]string]int{}
	var pods []recordedPod
	for _, c := range cs {
		k := [2]string{c.Namespace, c.Pod}
		i, ok := index[k]
		if !ok {
			i = len(pods)
			index[k] = i
			pods = append(pods, recordedPod{name: c.Pod})
		}
		p := &pods[i]
		r := Resources{MilliCPU: c.CPURequestMilli, Bytes: c.MemRequestBytes}
		if c.Role == metrics.RoleSidecar {
			p.sidecar, p.hasSidecar = p.sidecar.Add(r), true
			continue
		}
		p.role, p.own = c.Role, p.own.Add(r)
	}
	return pods
}

// recordedWorkload is every application pod that ran, whatever its
// namespace, counted once (so one "namespace" of them all), with its own
// sidecar's requests added when withSidecars; alike pods are counted
// together so that packing sees few kinds.
func recordedWorkload(name string, pods []recordedPod, withSidecars bool) Workload {
	w := Workload{Name: name, Namespaces: 1}
	for _, p := range pods {
		if p.role != metrics.RoleApp {
			continue
		}
		r := p.own
		if withSidecars {
			r = r.Add(p.sidecar)
		}
		w.Pods = addShape(w.Pods, p.name, r)
	}
	w.Pods = nameAlike(w.Pods)
	return w
}

// recordedScenario is one mesh's row: its application pods with their own
// sidecars, the largest of each per-node proxy on every node (a DaemonSet
// asks the same on each), and every control-plane and waypoint pod that
// ran. The load generator's sidecar is not counted.
func recordedScenario(name, mesh string, pods []recordedPod) scenario {
	s := scenario{w: recordedWorkload(name, pods, true), f: Footprint{Name: mesh, Description: "requests as recorded"}}
	perNode := map[metrics.Role]*Component{}
	var cp []Shape
	for _, p := range pods {
		switch p.role {
		case metrics.RoleApp:
			if p.hasSidecar {
				s.sidecars = addShape(s.sidecars, "sidecar", p.sidecar)
			}
		case metrics.RoleNodeProxy, metrics.RoleCNI:
			c := perNode[p.role]
			if c == nil {
				c = &Component{Name: string(p.role)}
				perNode[p.role] = c
			}
			c.Requests = larger(c.Requests, p.own)
		case metrics.RoleControlPlane, metrics.RoleWaypoint:
			cp = addShape(cp, p.name, p.own)
		}
	}
	for _, role := range []metrics.Role{metrics.RoleNodeProxy, metrics.RoleCNI} {
		if c := perNode[role]; c != nil {
			s.f.PerNode = append(s.f.PerNode, *c)
		}
	}
	for _, c := range nameAlike(cp) {
		s.f.ControlPlane = append(s.f.ControlPlane, Component{Name: c.Name, Requests: c.Requests, Replicas: c.Count})
	}
	return s
}

// addShape counts a pod into the shape of its requests, adding one when
// none has them.
func addShape(shapes []Shape, name string, r Resources) []Shape {
	for i := range shapes {
		if shapes[i].Requests == r {
			shapes[i].Count++
			return shapes
		}
	}
	return append(shapes, Shape{Name: name, Requests: r, Count: 1})
}

// nameAlike names a shape of several pods after its first and how many
// more are alike.
func nameAlike(shapes []Shape) []Shape {
	for i, s := range shapes {
		if s.Count > 1 {
			shapes[i].Name = fmt.Sprintf("%s (+%d alike)", s.Name, s.Count-1)
		}
	}
	return shapes
}

// larger is the larger of each resource.
func larger(a, b Resources) Resources {
	return Resources{MilliCPU: max(a.MilliCPU, b.MilliCPU), Bytes: max(a.Bytes, b.Bytes)}
}

// requestsNothing reports whether no pod of the workload requests
// anything.
func requestsNothing(w Workload) bool {
	for _, p := range w.Pods {
		if p.Requests != (Resources{}) {
			return false
		}
	}
	return true
}
