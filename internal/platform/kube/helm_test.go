package kube

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"sigs.k8s.io/yaml"
)

func TestLabelRenderer(t *testing.T) {
	t.Parallel()
	in := `---
# Source: base/templates/a.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: a
  labels:
    app: x
---
# Source: base/templates/empty.yaml
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
`
	out, err := labelRenderer{release: "istio-base"}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	docs := splitYAML(out.String())
	var objs []map[string]any
	for _, d := range docs {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(d), &o); err != nil {
			t.Fatal(err)
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects out, want 2:\n%s", len(objs), out)
	}
	for _, o := range objs {
		labels, _ := dig(o, "metadata.labels").(map[string]any)
		if got := labels[labelRelease]; got != "istio-base" {
			t.Errorf("%v: release label = %v", dig(o, "metadata.name"), got)
		}
	}
	if dig(objs[0], "metadata.labels.app") != "x" {
		t.Error("existing labels must be kept")
	}
}

// TestLinkerdChartNeedsRepository: Linkerd's charts come from the user's
// Helm repositories; without them the error says what to add.
func TestLinkerdChartNeedsRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := platformFor(t, "http://127.0.0.1:1", Options{
		HelmRepositoryConfig: filepath.Join(dir, "repositories.yaml"), HelmRepositoryCache: dir,
	})
	_, err := p.installRelease(context.Background(), helmRelease{Chart: mesh.ChartLinkerdCRDs, Name: "linkerd-crds", Namespace: linkerdNamespace}, 1)
	if err == nil || !strings.Contains(err.Error(), `Helm repository "linkerd"`) || !strings.Contains(err.Error(), "1.8.0") {
		t.Errorf("err = %v, want one naming the missing repository and the pinned version", err)
	}
}
