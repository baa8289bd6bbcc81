package report

import (
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/report/chart"
)

// profileColours gives each mesh profile its colour in every chart of
// every report, whatever order the meshes ran in, so that sidecar is the
// same colour in two runs. This table is the one place a profile's colour
// is set.
var profileColours = map[string]string{
	mesh.ProfileBaseline:         chart.Palette[0],
	mesh.ProfileSidecar:          chart.Palette[1],
	mesh.ProfileAmbient:          chart.Palette[2],
	mesh.ProfileAmbientWaypoint:  chart.Palette[3],
	mesh.ProfileAmbientL4Policy:  chart.Palette[4],
	mesh.ProfileSidecarL7Policy:  chart.Palette[5],
	mesh.ProfileWaypointL7Policy: "#7F3C8D",
	mesh.ProfileLinkerd:          "#8C564B",
	mesh.ProfileCilium:           "#6B6B00",
}

// meshColours assigns each mesh its profile's colour. A second mesh of
// the same profile, or one of no known profile, takes the first palette
// colour no other mesh has.
func meshColours(d *analysis.Dataset) map[string]string {
	out := map[string]string{}
	var used []string
	for _, m := range d.Meshes {
		if c, ok := profileColours[meshProfile(d, m)]; ok && !slices.Contains(used, c) {
			out[m] = c
			used = append(used, c)
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
