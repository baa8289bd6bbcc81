package report

import (
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// meshColours assigns each mesh its profile's colour. A second mesh of
// the same profile, or one of no known profile, takes the first palette
// colour no other mesh has.
func meshColours(d *analysis.Dataset) map[string]string {
	out := map[string]string{}
	var used []string
	for _, m := range d.Meshes {
		if p, ok := mesh.LookupProfile(meshProfile(d, m)); ok && p.Colour != "" && !slices.Contains(used, p.Colour) {
			out[m] = p.Colour
			used = append(used, p.Colour)
		}
	}
	spare := 0
	for _, m := range d.Meshes {
		if out[m] != "" {
			continue
		}
		for ; spare < len(chart.Palette) && slices.Contains(used, chart.Palette[spare]); spare++ {
		}
		c := chart.Colour(spare)
		out[m] = c
		used = append(used, c)
		spare++
	}
	return out
}

// meshProfile is the profile a mesh ran, as its cells or its capacity
// search recorded it.
func meshProfile(d *analysis.Dataset, mesh string) string {
	for _, c := range d.Index.Cells {
		if c.Mesh == mesh {
			return c.Profile
		}
	}
	for _, c := range d.Index.Capacity {
		if c.Mesh == mesh {
			return c.Profile
		}
	}
	return ""
}
