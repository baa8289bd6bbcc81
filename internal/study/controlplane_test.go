package study

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
)

func TestMeshControlPlane(t *testing.T) {
	t.Parallel()
	study := func(meshes string) string {
		return "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: cp\nworkload:\n  graph: small-graph.yaml\nmeshes:\n" + meshes + "load:\n  duration: 5s\n"
	}
	tests := []struct {
		name, meshes, wantErr string
	}{
		{"both control planes", "- profile: sidecar\n- {name: sidecar-istiod, profile: sidecar, control_plane: istiod}\n", ""},
		{"meshbench named", "- {profile: sidecar-l7-policy, control_plane: meshbench}\n", ""},
		{"istiod for ambient", "- {profile: ambient, control_plane: istiod}\n",
			`meshes[0].control_plane: istiod configures profiles sidecar, sidecar-l7-policy, ambient-waypoint, waypoint-l7-policy on the lab, not "ambient"`},
		{"unknown", "- {profile: sidecar, control_plane: linkerd}\n", `meshes[0].control_plane: unknown control plane "linkerd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse([]byte(study(tt.meshes)), "testdata")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to hold %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if last := s.Meshes[len(s.Meshes)-1]; tt.name == "both control planes" && last.ControlPlane != mesh.ControlPlaneIstiod {
				t.Errorf("mesh %+v", last)
			}
		})
	}
}
