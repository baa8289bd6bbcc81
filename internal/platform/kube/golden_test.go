package kube

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCases are the manifests under golden test; the integration test
// also applies them to the API server with server-side dry-run.
type goldenCase struct {
	name    string
	golden  string
	objects func(t *testing.T) []*unstructured.Unstructured
}

func testGraph(t *testing.T, name string) *topology.Graph {
	t.Helper()
	g, err := topology.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var testPlacement = placement{
	NodeSelector: map[string]string{labelRole: "app"},
	Tolerations:  []corev1.Toleration{{Key: "meshbench.io/dedicated", Operator: corev1.TolerationOpEqual, Value: "app", Effect: corev1.TaintEffectNoSchedule}},
}

func workloadCase(graph string, namespaces int, replicas map[string]int) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured {
		w := platform.Workload{Graph: testGraph(t, graph), Namespaces: namespaces, Replicas: replicas}
		objs, err := workloadManifests(w, manifestParams{Image: "registry.example/meshbench:v0", PullPolicy: corev1.PullIfNotPresent, Place: testPlacement})
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
}

// meshObjectsCase is a profile's own mesh objects for a workload of the
// graph in namespaces namespaces, with or without the ingress.
func meshObjectsCase(graph, profileName string, namespaces int, ingress bool) func(t *testing.T) []*unstructured.Unstructured {
	return func(t *testing.T) []*unstructured.Unstructured {
		p := &kubePlatform{
			opts:       Options{Ingress: ingress, GatewayImage: defaultGatewayImage},
			workload:   &platform.Workload{Graph: testGraph(t, graph), Namespaces: namespaces},
			namespaces: topology.Namespaces(namespaces),
			places:     map[infra.NodeRole]placement{infra.NodeApp: testPlacement, infra.NodeMesh: {NodeSelector: map[string]string{labelRole: "mesh"}}},
		}
		pl, err := p.plan(mesh.MeshSpec{Profile: profileName})
		if err != nil {
			t.Fatal(err)
		}
		return pl.Objects
	}
}

var goldenCases = []goldenCase{
	{name: "tiered two namespaces", golden: "workload-tiered.yaml", objects: workloadCase("tiered", 2, nil)},
	{name: "bookinfo versions and replica override", golden: "workload-bookinfo.yaml", objects: workloadCase("bookinfo", 1, map[string]int{"productpage": 4})},
	{name: "ambient L4 policy", golden: "mesh-ambient-l4-policy.yaml", objects: meshObjectsCase("tiered", mesh.ProfileAmbientL4Policy, 1, false)},
	{name: "waypoint L7 policy", golden: "mesh-waypoint-l7-policy.yaml", objects: meshObjectsCase("bookinfo", mesh.ProfileWaypointL7Policy, 1, false)},
	{name: "sidecar L7 policy", golden: "mesh-sidecar-l7-policy.yaml", objects: meshObjectsCase("tiered", mesh.ProfileSidecarL7Policy, 1, false)},
	{name: "ambient L4 policy with ingress", golden: "mesh-ambient-l4-policy-ingress.yaml", objects: meshObjectsCase("bookinfo", mesh.ProfileAmbientL4Policy, 2, true)},
	{name: "baseline with ingress", golden: "mesh-baseline-ingress.yaml", objects: meshObjectsCase("bookinfo", mesh.ProfileBaseline, 2, true)},
}

func TestGoldenManifests(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := manifestYAML(tc.objects(t))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenManifests -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the generated manifests; if the change is intended, run go test -run TestGoldenManifests -update\n%s", path, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	la, lb := splitLines(a), splitLines(b)
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n  golden:    " + x + "\n  generated: " + y
		}
	}
	return ""
}
