package study

import (
	"slices"
	"strings"
	"testing"
)

func TestMeshUseExisting(t *testing.T) {
	t.Parallel()
	kube := func(meshes string) string {
		return `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: existing
platform:
  type: kubernetes
  nodes:
  - {role: app}
  - {role: load}
  kubernetes:
    image: registry.example/meshbench:v0.1.0
workload:
  graph: tiered
meshes:
` + meshes + `load:
  rate: 100
  duration: 60s
`
	}
	lab := "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: existing\nworkload:\n  graph: small-graph.yaml\nmeshes:\n- {profile: sidecar, use_existing: true}\nload:\n  duration: 5s\n"
	tests := []struct {
		name, study, wantErr string
	}{
		{"istio profiles", kube("- profile: baseline\n- {profile: sidecar, use_existing: true}\n- {profile: ambient, use_existing: true}\n- profile: linkerd\n"), ""},
		{"one istio profile without", kube("- {profile: sidecar, use_existing: true}\n- profile: ambient\n"),
			`line 15:3: meshes[1].use_existing: false, but true on meshes[0] (sidecar): on one cluster every istio profile uses the existing istio or none does`},
		{"baseline", kube("- {profile: baseline, use_existing: true}\n"),
			`line 14:37: meshes[0].use_existing: profile "baseline" has no mesh meshbench would install`},
		{"cilium", kube("- {profile: cilium, use_existing: true}\n"), `line 14:35: meshes[0].use_existing: profile "cilium" has no mesh`},
		{"lab", lab, `line 7:36: meshes[0].use_existing: only for platform kubernetes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse([]byte(tt.study), "testdata")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to hold %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []bool
			for _, m := range s.Platform.Meshes {
				got = append(got, m.UseExisting)
			}
			if want := []bool{false, true, true, false}; !slices.Equal(got, want) {
				t.Errorf("use_existing per mesh = %v, want %v", got, want)
			}
		})
	}
}
