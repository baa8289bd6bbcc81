package study

import (
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
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

// TestPlatformIngress checks that a study whose cells load through the
// ingress, by its load or a sweep, asks the platform for an ingress.
func TestPlatformIngress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		preset string
		want   bool
	}{
		{"livewyer-bookinfo", true}, // path swept, linked with replicas
		{"solo-tiered", false},
		{"quick", false},
	}
	for _, tt := range tests {
		s, _, err := Preset(tt.preset, PlatformOverride{Type: PlatformKubernetes, Image: "registry.example/mb:v1"})
		if err != nil {
			t.Fatal(err)
		}
		if s.Platform.Ingress != tt.want {
			t.Errorf("%s: Platform.Ingress = %v, want %v", tt.preset, s.Platform.Ingress, tt.want)
		}
	}
	src := []byte("apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: s\nworkload: {graph: tiered}\nmeshes: [{profile: baseline}]\nload: {duration: 1s, path: ingress}\n")
	s, err := Parse(src, ".")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Platform.Ingress {
		t.Error("load.path ingress: Platform.Ingress = false")
	}
}

// TestGeneratorResources checks that the 50-tenant preset's generator
// resources reach every cell's load.
func TestGeneratorResources(t *testing.T) {
	t.Parallel()
	s, _, err := Preset("solo-tiered", PlatformOverride{Type: PlatformKubernetes, Image: "registry.example/mb:v1"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(s, s.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Cells {
		if r := c.Load.Resources; r.CPURequest != "500m" || r.CPULimit != "500m" || r.MemoryRequest != "300Mi" || r.MemoryLimit != "300Mi" {
			t.Fatalf("cell %s generator resources %+v, want 500m / 300Mi", c.ID, r)
		}
	}
}

// TestPerNamespaceLatency checks the per-namespace figures beside the
// pooled ones: the mean of each generator's own percentile, which differs
// from the pooled percentile when namespaces differ.
func TestPerNamespaceLatency(t *testing.T) {
	t.Parallel()
	gen := func(ms ...int) load.Result {
		h := metrics.NewHistogram()
		for _, m := range ms {
			h.Record(time.Duration(m) * time.Millisecond)
		}
		return load.Result{Latency: h, Requests: int64(len(ms))}
	}
	fast, slow := gen(1, 1, 1, 1), gen(9, 9, 9, 9)
	if got := perNamespace([]load.Result{fast}); got != nil {
		t.Errorf("one generator: %+v, want nil (the pooled figures are its own)", got)
	}
	got := perNamespace([]load.Result{fast, slow})
	if got == nil || got.P50 < 4.99 || got.P50 > 5.01 {
		t.Fatalf("per-namespace p50 = %+v, want the mean of 1 ms and 9 ms", got)
	}
	cell := &results.Cell{}
	record(cell, platform.Measurement{Generators: []load.Result{fast, slow}}, 0, DefaultMaxErrorRate)
	if cell.NamespaceLatencyMs == nil || cell.LatencyMs.P50 == cell.NamespaceLatencyMs.P50 {
		t.Errorf("recorded pooled p50 %v and per-namespace %+v, want both, differing", cell.LatencyMs.P50, cell.NamespaceLatencyMs)
	}
	if perNamespace([]load.Result{fast, {Latency: metrics.NewHistogram()}}) != nil {
		t.Error("a namespace that completed nothing must not be averaged in as zero")
	}
}
