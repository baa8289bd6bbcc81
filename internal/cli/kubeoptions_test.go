//go:build !labonly

package cli

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/platform/kube"
	"github.com/meshbench/meshbench/internal/study"
)

func TestKubernetesOptions(t *testing.T) {
	t.Parallel()
	s, _, err := study.LoadFile("../study/testdata/valid-kubernetes-charts.yaml", study.PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	o := kubeOptions(s.Platform.Kubernetes)
	pilot, _ := o.Charts["istiod"].Values["pilot"].(map[string]any)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"image", o.Image, "registry.example/meshbench:v0.1.0"},
		{"timeout", o.Timeout, 10 * time.Minute},
		{"charts", len(o.Charts), 3},
		{"istiod version", o.Charts["istiod"].Version, "1.22.3"},
		{"istiod values", pilot != nil, true},
		{"linkerd repo", o.Charts["linkerd-control-plane"].Repo, "https://helm.linkerd.io/stable"},
		{"gateway values", o.Charts["istio-gateway"].Values["replicaCount"], float64(2)},
		{"meshes for the preflight", s.Platform.Meshes[3].Profile + "@" + s.Platform.Meshes[3].Context, "cilium@cilium-cluster"},
		{"meshes", s.Meshes[2].Profile + "," + s.Meshes[3].Profile, "linkerd,cilium"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if o := kubeOptions(nil); o.Image != "" || o.Kubeconfig != "" || o.Charts != nil {
		t.Errorf("nil section gave %+v, want kube's defaults", o)
	}
}

// TestAllowChartRulesFlag: the flag the Kubernetes platform's refusal of
// a wide chart rule names is the one doctor, run and kubernetes rbac take.
func TestAllowChartRulesFlag(t *testing.T) {
	if "--"+allowChartRulesFlag != kube.AllowChartRulesFlag {
		t.Errorf("the commands take --%s, the refusal names %s", allowChartRulesFlag, kube.AllowChartRulesFlag)
	}
	g := &globals{}
	for _, c := range []*cobra.Command{newDoctorCmd(Streams{}, g), newRunCmd(Streams{}, g), newKubernetesRBACCmd(Streams{})} {
		if c.Flags().Lookup(allowChartRulesFlag) == nil {
			t.Errorf("meshbench %s has no --%s", c.Name(), allowChartRulesFlag)
		}
	}
}
