package cost

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/mesh"
)

// scenario is the pods of one row: the application's and what a mesh adds
// to them.
type scenario struct {
	w Workload
	f Footprint
	// sidecars are the sidecars the workload's pods already carry, by
	// request shape, when a run recorded each pod's own; they describe the
	// row and are not added again.
	sidecars []Shape
}

// scenarios pairs the workload with the baseline and with each mesh.
func scenarios(w Workload, meshes []Footprint) []scenario {
	out := []scenario{{w: w, f: Footprint{Name: mesh.ProfileBaseline}}}
	for _, f := range meshes {
		if f.Name != mesh.ProfileBaseline {
			out = append(out, scenario{w: w, f: f})
		}
	}
	return out
}

// lines describes what the scenario's mesh adds, one line per component.
func (s scenario) lines() []string {
	var out []string
	for _, sc := range s.sidecars {
		pods := "pods"
		if sc.Count == 1 {
			pods = "pod"
		}
		out = append(out, fmt.Sprintf("%s: %v on %d application %s", sc.Name, sc.Requests, sc.Count, pods))
	}
	out = append(out, s.f.componentLines()...)
	if len(out) == 0 {
		out = append(out, "adds nothing")
	}
	return out
}
