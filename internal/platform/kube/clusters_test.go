package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// recordingPlatform is a cluster that records the calls it gets.
type recordingPlatform struct {
	name string
	log  *[]string
	fail string // a method that fails
}

func (r *recordingPlatform) call(method string) error {
	*r.log = append(*r.log, r.name+"."+method)
	if r.fail == method {
		return errors.New(method + " failed")
	}
	return nil
}

func (r *recordingPlatform) Info(context.Context) (infra.Info, error) {
	return infra.Info{Name: "kubernetes", Versions: map[string]string{"kubernetes": "v1-" + r.name}}, r.call("Info")
}
func (r *recordingPlatform) Up(context.Context, infra.ClusterSpec) error { return r.call("Up") }
func (r *recordingPlatform) Deploy(context.Context, platform.Workload) error {
	return r.call("Deploy")
}
func (r *recordingPlatform) InstallMesh(_ context.Context, m mesh.MeshSpec) ([]mesh.Check, error) {
	return nil, r.call("Install(" + m.Profile + ")")
}
func (r *recordingPlatform) RemoveMesh(context.Context) error { return r.call("Remove") }
func (r *recordingPlatform) Measure(context.Context, infra.LoadSpec) (platform.Measurement, error) {
	return platform.Measurement{}, r.call("Measure")
}
func (r *recordingPlatform) Down(context.Context) error { return r.call("Down") }

// TestClusters checks that meshes naming another context run on that
// cluster, interleaved with the others, each cluster holding the
// workload, and the installed mesh removed before another cluster's.
func TestClusters(t *testing.T) {
	t.Parallel()
	var log []string
	a := &recordingPlatform{name: "a", log: &log}
	b := &recordingPlatform{name: "b", log: &log, fail: "Down"}
	c := newClusters([]string{"a", "b"}, map[string]platform.Platform{"a": a, "b": b},
		func(m mesh.MeshSpec) string {
			if m.Context == "" {
				return "a"
			}
			return m.Context
		})
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info.Versions["a/kubernetes"] != "v1-a" || info.Versions["b/kubernetes"] != "v1-b" {
		t.Errorf("Info = %+v, %v; want both clusters' versions", info, err)
	}
	if err := c.Up(ctx, infra.ClusterSpec{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Deploy(ctx, platform.Workload{}); err != nil {
		t.Fatal(err)
	}
	cilium := mesh.MeshSpec{Profile: mesh.ProfileCilium, Context: "b"}
	base := mesh.MeshSpec{Profile: mesh.ProfileBaseline}
	for _, m := range []mesh.MeshSpec{base, cilium, cilium, base} {
		if _, err := c.InstallMesh(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Measure(ctx, infra.LoadSpec{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileCilium, Context: "c"}); err == nil || !strings.Contains(err.Error(), `context "c"`) {
		t.Errorf("a mesh on an unopened context: err = %v", err)
	}
	err = c.Down(ctx)
	if err == nil || !strings.Contains(err.Error(), `context "b": Down failed`) {
		t.Errorf("Down = %v, want b's failure named", err)
	}
	want := "a.Info b.Info a.Up b.Up a.Deploy b.Deploy " +
		"a.Install(baseline) a.Measure a.Remove b.Install(cilium) b.Measure b.Install(cilium) b.Measure " +
		"b.Remove a.Install(baseline) a.Measure a.Down b.Down"
	if got := strings.Join(log, " "); got != want {
		t.Errorf("calls:\n got %s\nwant %s", got, want)
	}
}

func TestNewOpensEachContext(t *testing.T) {
	t.Parallel()
	kc := writeTestKubeconfig(t, "a", "b")
	tests := []struct {
		name   string
		opts   Options
		multi  bool
		single string // the one cluster's context
	}{
		{name: "no contexts", opts: Options{Context: "a", Meshes: []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}}}, single: "a"},
		{name: "cilium elsewhere", opts: Options{Context: "a", Meshes: []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}, {Profile: mesh.ProfileCilium, Context: "b"}}}, multi: true},
		{name: "every mesh elsewhere", opts: Options{Context: "a", Meshes: []mesh.MeshSpec{{Profile: mesh.ProfileCilium, Context: "b"}}}, single: "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.opts.Kubeconfig, tc.opts.Image = kc, "registry.example/mb:v1"
			p, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			switch got := p.(type) {
			case *clusters:
				if !tc.multi || strings.Join(got.contexts, ",") != "a,b" {
					t.Errorf("clusters %v, want multi=%v", got.contexts, tc.multi)
				}
			case *kubePlatform:
				if tc.multi || got.opts.Context != tc.single {
					t.Errorf("one cluster at context %q, want multi=%v single=%q", got.opts.Context, tc.multi, tc.single)
				}
			}
		})
	}
}

// writeTestKubeconfig writes a kubeconfig with one context per name, each
// its own (unreachable) cluster.
func writeTestKubeconfig(t *testing.T, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nusers: [{name: u, user: {}}]\nclusters:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- {name: %s, cluster: {server: \"https://%s.invalid:6443\"}}\n", c, c)
	}
	b.WriteString("contexts:\n")
	for _, c := range contexts {
		fmt.Fprintf(&b, "- {name: %s, context: {cluster: %s, user: u}}\n", c, c)
	}
	fmt.Fprintf(&b, "current-context: %s\n", contexts[0])
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
