package study

import (
	"slices"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
)

// TestMeshBenchStudy keeps bench/mesh's study valid and covering every
// profile the lab runs.
func TestMeshBenchStudy(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("../../bench/mesh/every-profile.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range s.Meshes {
		got = append(got, m.Profile)
	}
	slices.Sort(got)
	if want := mesh.ProfileNames(infra.Lab); !slices.Equal(got, want) {
		t.Errorf("bench/mesh study runs %v, want every lab profile %v", got, want)
	}
}

// TestParityBenchStudy keeps bench/mesh's parity study valid: each profile
// istiod configures, under both control planes.
func TestParityBenchStudy(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("../../bench/mesh/control-plane-parity.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	under := map[string][]string{}
	for _, m := range s.Meshes {
		cp := m.ControlPlane
		if cp == "" {
			cp = mesh.ControlPlaneMeshbench
		}
		under[m.Profile] = append(under[m.Profile], cp)
	}
	for _, p := range mesh.IstiodProfiles {
		if got := under[p]; !slices.Equal(got, []string{mesh.ControlPlaneMeshbench, mesh.ControlPlaneIstiod}) {
			t.Errorf("profile %s runs under %v, want meshbench then istiod", p, got)
		}
	}
}
