package study

import (
	"strings"
	"testing"
)

func TestLoadFilePlatformOverride(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		o       PlatformOverride
		wantErr string
		check   func(t *testing.T, p Platform)
	}{
		{name: "flags win over the file", file: "testdata/valid-kubernetes.yaml",
			o: PlatformOverride{Kubeconfig: "/tmp/kc", Context: "other"},
			check: func(t *testing.T, p Platform) {
				if k := p.Kubernetes; k.Kubeconfig != "/tmp/kc" || k.Context != "other" || k.Image != "registry.example/meshbench:v0.1.0" {
					t.Errorf("kubernetes = %+v", k)
				}
			}},
		{name: "lab study onto kubernetes", file: "testdata/valid-minimal.yaml",
			o: PlatformOverride{Type: PlatformKubernetes, Image: "registry.example/mb:v1"},
			check: func(t *testing.T, p Platform) {
				if p.Type != PlatformKubernetes || p.Kubernetes == nil || p.Kubernetes.Image != "registry.example/mb:v1" || len(p.Nodes) != 4 {
					t.Errorf("platform = %+v", p)
				}
			}},
		{name: "image completes a bare section", file: "testdata/invalid-kube-no-image.yaml",
			o: PlatformOverride{Image: "registry.example/mb:v1"},
			check: func(t *testing.T, p Platform) {
				if p.Kubernetes.Image != "registry.example/mb:v1" {
					t.Errorf("kubernetes = %+v", p.Kubernetes)
				}
			}},
		{name: "kubernetes without an image", file: "testdata/valid-minimal.yaml",
			o: PlatformOverride{Type: PlatformKubernetes, Context: "c"}, wantErr: "platform.kubernetes.image: required"},
		{name: "kubernetes study onto the lab", file: "testdata/valid-kubernetes.yaml",
			o: PlatformOverride{Type: PlatformLab},
			check: func(t *testing.T, p Platform) {
				if p.Type != PlatformLab || p.Kubernetes != nil {
					t.Errorf("platform = %+v", p)
				}
			}},
		{name: "linkerd onto the lab", file: "testdata/valid-kubernetes-charts.yaml",
			o: PlatformOverride{Type: PlatformLab}, wantErr: `meshes[2].profile: "linkerd" runs only on platform kubernetes`},
		{name: "cluster flags on the lab", file: "testdata/valid-minimal.yaml",
			o: PlatformOverride{Kubeconfig: "/tmp/kc"}, wantErr: "--kubeconfig, --context and --image are for --platform kubernetes"},
		{name: "unknown platform", file: "testdata/valid-minimal.yaml",
			o: PlatformOverride{Type: "nomad"}, wantErr: `--platform "nomad": want lab or kubernetes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := LoadFile(tt.file, tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to hold %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s.Platform)
		})
	}
}
