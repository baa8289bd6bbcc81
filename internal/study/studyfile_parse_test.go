package study

import (
	"bufio"
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

func TestParseValidFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/valid-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid study files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			s, data, err := LoadFile(f, PlatformOverride{})
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			if s.Graph == nil || len(s.SHA256) != 64 || len(data) == 0 {
				t.Fatalf("graph %v, hash %q", s.Graph, s.SHA256)
			}
			if _, err := NewPlan(s, s.ScalingFor(0)); err != nil {
				t.Fatalf("NewPlan: %v", err)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-minimal.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"platform", s.Platform.Type, PlatformLab},
		{"nodes", len(s.Platform.Nodes), 4},
		{"namespaces", s.Workload.Namespaces, 1},
		{"mesh name", s.Meshes[0].Name, "baseline"},
		{"connections", s.Load.Connections, DefaultConnections},
		{"timeout", s.Load.Timeout, DefaultTimeout},
		{"keepalive", *s.Load.KeepAlive, true},
		{"path", s.Load.Path, infra.PathService},
		{"generators", s.Load.Generators, GeneratorsOne},
		{"repetitions", s.Repetitions, Repetitions{Min: DefaultRepetitions, Max: DefaultRepetitions}},
		{"max error rate", *s.MaxErrorRate, DefaultMaxErrorRate},
		{"noise threshold", s.Noise.Threshold, results.DefaultNoiseThreshold},
		{"noise retries", *s.Noise.Retries, DefaultNoiseRetries},
		{"shuffle", *s.Order.Shuffle, true},
		{"seed from hash", s.Order.Seed != 0, true},
		{"no scaling", s.ScalingFor(0).Mode, results.ScaleNone},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestGRPCEntryMakesGRPCLoad(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-grpc.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(s, s.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Cells[0].Load.Options; !o.GRPC || o.HTTP2 || o.NoKeepAlive {
		t.Errorf("load options %+v; want gRPC, with keep-alive", o)
	}
}

func TestParseAppliesResources(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-full.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Graph.Service("front").Resources.CPULimit; got != "500m" {
		t.Errorf("front cpu_limit = %q, want its own 500m", got)
	}
	if got := s.Graph.Service("back").Resources.MemoryRequest; got != "64Mi" {
		t.Errorf("back memory_request = %q, want the \"*\" entry's 64Mi", got)
	}
	if s.Meshes[2].Name != "sidecar-4w" || s.Meshes[2].Workers != 4 {
		t.Errorf("mesh 2 = %+v", s.Meshes[2])
	}
}

// TestParseInvalidFiles checks that each invalid file fails with every
// error it holds, each naming the file, the line and column where the
// field's value is known, and the field: the file's first lines say, as
// "# want: LINE:COL: field: message" (or "# want: field: message" for a
// field the file leaves out), what each error line must begin with, in
// order.
func TestParseInvalidFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/invalid-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid study files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			wants := wantLines(t, f)
			_, _, err := LoadFile(f, PlatformOverride{})
			if err == nil {
				t.Fatalf("LoadFile accepted it; want errors %q", wants)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(wants) {
				t.Errorf("%d errors, want %d:\n%s", len(got), len(wants), err)
			}
			for i, want := range wants {
				if want[0] >= '0' && want[0] <= '9' {
					want = f + ":" + want
				} else {
					want = f + ": " + want
				}
				if i >= len(got) || !strings.HasPrefix(got[i], want) {
					t.Errorf("error %d does not begin %q; errors:\n%s", i, want, err)
				}
			}
		})
	}
}

// wantLines is the "# want: " lines a file begins with.
func wantLines(t *testing.T, path string) []string {
	t.Helper()
	var wants []string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, path)))
	for sc.Scan() {
		want, ok := strings.CutPrefix(sc.Text(), "# want: ")
		if !ok {
			break
		}
		wants = append(wants, want)
	}
	if len(wants) == 0 {
		t.Fatalf("%s: first line must be \"# want: <error text>\"", path)
	}
	return wants
}

func TestPresets(t *testing.T) {
	t.Parallel()
	names := PresetNames()
	for _, want := range []string{"boutique-resources", "bulk", "capacity", "churn", "conn-ceiling", "livewyer-bookinfo", "quick", "solo-tiered"} {
		if _, err := PresetSource(want); err != nil {
			t.Errorf("preset %s: %v (have %v)", want, err, names)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _, err := Preset(name, PlatformOverride{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Errorf("preset %s is named %q", name, s.Name)
			}
			// A pure search finds its own rates, the profile's rates are
			// what it measures unit costs at, churn's what it opens
			// connections at, bulk's closed loop finds its own, and
			// regression compares two releases at one low rate; every other
			// preset scales its cells' rates to the lab.
			fixed := name == "profile" || name == "churn" || name == "bulk" || name == "regression"
			if s.Description == "" || (s.Scaling != nil) != (s.HasCells() && !fixed) {
				t.Errorf("preset %s needs a description, and a scaling section for the lab unless it searches", name)
			}
			if _, err := NewPlan(s, s.ScalingFor(0)); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := PresetSource("../presets/quick"); err == nil {
		t.Error("a path escaping the presets was accepted")
	}
}

func TestPresetShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cells      int
		namespaces int
		groups     int
	}{
		// 3 meshes x 3 repetitions, then the search.
		{"quick", 18, 1, 1},
		// 5 meshes x 5 repetitions x 2 loaded-tenant counts (1 and 2),
		// only the loaded tenants deployed: 2 deployments.
		{"solo-tiered", 60, 1, 2},
		// 3 connections x 7 linked rows x 3 meshes x 5 repetitions; the
		// replica counts 1, 2, 4, 6, 8 make 5 deployments.
		{"livewyer-bookinfo", 378, 1, 5},
		{"boutique-resources", 18, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := Preset(tt.name, PlatformOverride{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(s, s.ScalingFor(0))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Cells) != tt.cells || p.Groups != tt.groups || p.Cells[0].Namespaces != tt.namespaces {
				t.Errorf("%d cells, %d groups, %d namespaces; want %d, %d, %d",
					len(p.Cells), p.Groups, p.Cells[0].Namespaces, tt.cells, tt.groups, tt.namespaces)
			}
		})
	}
}

// Nodes given by role alone are named <role>-<n>, on Kubernetes as on
// the lab (the docs' Kubernetes example gives no names).
func TestParseNodesByRoleAlone(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-kubernetes-roles-only.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range s.Platform.Nodes {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, ","); got != "app-1,load-1,mesh-1" {
		t.Errorf("node names %s, want app-1,load-1,mesh-1", got)
	}
}

// A mesh written as a profile's name alone is that profile, named after
// it; a mapping beside it keeps its own name and settings.
func TestParseMeshShorthand(t *testing.T) {
	t.Parallel()
	s, _, err := LoadFile("testdata/valid-shorthand-meshes.yaml", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mesh{
		{Name: "baseline", MeshSpec: mesh.MeshSpec{Profile: "baseline"}},
		{Name: "sidecar", MeshSpec: mesh.MeshSpec{Profile: "sidecar"}},
		{Name: "sidecar-4w", MeshSpec: mesh.MeshSpec{Profile: "sidecar", Workers: 4}},
	}
	if !reflect.DeepEqual(s.Meshes, want) {
		t.Errorf("meshes %+v, want %+v", s.Meshes, want)
	}
}
