package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/results"
)

// scaling says how the load was fitted to the platform, as the runner
// did it: a calibrated run names the mesh whose capacity the load was
// scaled to and lists every mesh's measured capacity.
func scaling(sc *results.Scaling) []Block {
	if sc == nil || sc.Mode == "" || sc.Mode == "none" {
		return []Block{text("The load ran as the study specifies it, unscaled.")}
	}
	var parts []string
	switch {
	case sc.Mode == "tenants":
		s := fmt.Sprintf("Scaled by tenants, not by rate: %s.", strings.TrimSuffix(sc.Note, "."))
		out := []Block{text(strings.ToUpper(s[:1]) + s[1:])}
		if t := capacities(sc); t != nil {
			out = append(out, table(t))
		}
		return out
	case sc.Mode == "calibrated" && sc.Reference != "":
		parts = append(parts, fmt.Sprintf("Calibrated on the slowest mesh, %s (%s req/s): before the cells, a short closed-loop measurement found each mesh's capacity, "+
			"and the load was scaled to the slowest's so that every mesh ran below saturation", sc.Reference, num(sc.Capacities[sc.Reference])))
		if sc.PublishedRate > 0 {
			parts = append(parts, fmt.Sprintf("open-loop rates offered %s%% of it", num(100*sc.Fraction)))
		}
	case sc.Mode == "calibrated":
		// Results from before the runner calibrated on the slowest mesh
		// record the baseline's capacity only.
		parts = append(parts, fmt.Sprintf("Calibrated: the baseline's capacity was measured at %s req/s and the load set to %s%% of it",
			num(sc.BaselineCapacity), num(100*sc.Fraction)))
	default:
		parts = append(parts, fmt.Sprintf("Scaled by a fixed factor (mode %q)", sc.Mode))
	}
	if sc.Rate > 0 {
		parts = append(parts, fmt.Sprintf("the lab's rate was %s req/s", num(sc.Rate)))
	}
	if sc.PublishedRate > 0 {
		parts = append(parts, fmt.Sprintf("the published rate %s req/s", num(sc.PublishedRate)))
	}
	parts = append(parts, fmt.Sprintf("factor %s of the published load", num(sc.Factor)))
	s := strings.Join(parts, "; ") + "."
	if note := strings.TrimSuffix(sc.Note, "."); note != "" {
		s += " " + strings.ToUpper(note[:1]) + note[1:] + "."
	}
	out := []Block{text(s)}
	if t := capacities(sc); t != nil {
		out = append(out, table(t))
	}
	return out
}

// capacities tabulates the calibration's measured capacities, fastest
// first, each relative to the reference's; nil when none was recorded.
func capacities(sc *results.Scaling) *Table {
	if len(sc.Capacities) == 0 {
		return nil
	}
	meshes := slices.SortedFunc(maps.Keys(sc.Capacities), func(a, b string) int {
		return cmp.Or(cmp.Compare(sc.Capacities[b], sc.Capacities[a]), cmp.Compare(a, b))
	})
	ref := sc.Capacities[sc.Reference]
	t := &Table{Header: []string{"Mesh", "Capacity (req/s)", "Relative to the reference"}}
	for _, m := range meshes {
		name, rel := m, "—"
		if m == sc.Reference {
			name += " (reference)"
		}
		if ref > 0 {
			rel = num(sc.Capacities[m]/ref) + "×"
		}
		t.Rows = append(t.Rows, []string{name, num(sc.Capacities[m]), rel})
	}
	t.Notes = []string{"Closed-loop capacity measured before the cells, on the first workload shape: requests answered without error per second."}
	return t
}
