package report

import (
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

// TestMeshColoursFollowTheProfile: a mesh takes its profile's colour from
// the registry whatever order the study ran its meshes in; a second mesh
// of one profile takes a spare colour, not the first one's.
func TestMeshColoursFollowTheProfile(t *testing.T) {
	dataset := func(meshes ...string) *analysis.Dataset {
		d := &analysis.Dataset{Meshes: meshes, Index: &results.Index{}}
		for _, m := range meshes {
			p := m
			if m == "sidecar-2" {
				p = mesh.ProfileSidecar
			}
			d.Index.Cells = append(d.Index.Cells, results.Summary{Mesh: m, Profile: p})
		}
		return d
	}
	want := func(name string) string {
		p, ok := mesh.LookupProfile(name)
		if !ok || p.Colour == "" {
			t.Fatalf("profile %q has no colour in the registry", name)
		}
		return p.Colour
	}
	a := meshColours(dataset(mesh.ProfileBaseline, mesh.ProfileSidecar, mesh.ProfileAmbient))
	b := meshColours(dataset(mesh.ProfileAmbient, mesh.ProfileSidecar, mesh.ProfileBaseline, "sidecar-2"))
	for _, p := range []string{mesh.ProfileBaseline, mesh.ProfileSidecar, mesh.ProfileAmbient} {
		if a[p] != want(p) || b[p] != want(p) {
			t.Errorf("%s: colours %s and %s, want the registry's %s in both orders", p, a[p], b[p], want(p))
		}
	}
	if b["sidecar-2"] == "" || b["sidecar-2"] == b[mesh.ProfileSidecar] {
		t.Errorf("a second sidecar mesh took %q, want a colour of its own", b["sidecar-2"])
	}
}
