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
