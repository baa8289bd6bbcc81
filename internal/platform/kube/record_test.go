package kube

import (
	"context"
	"strings"
	"testing"

	helmrelease "helm.sh/helm/v3/pkg/release"
)

// TestCheckReleaseRefusesAChangedRelease: a recorded release is
// uninstalled only when Helm's stored release is still what the run
// recorded: its run label, and the digest of its manifest and hooks. A
// manifest or a hook changed since, or a release another run's labels
// claim, is refused before any object it names is read.
func TestCheckReleaseRefusesAChangedRelease(t *testing.T) {
	t.Parallel()
	const run = "20260101-000000-a1b2c3"
	stored := func() *helmrelease.Release {
		return &helmrelease.Release{Name: "istiod", Namespace: "istio-system",
			Hooks:  []*helmrelease.Hook{{Name: "cleanup", Manifest: "kind: Job\nmetadata: {name: cleanup}\n"}},
			Labels: map[string]string{labelRun: run}}
	}
	r := installedRelease{Name: "istiod", Namespace: "istio-system", Run: run, Manifest: manifestDigest(stored())}
	// No client: a refusal must come before any object is looked up, and
	// the intact release names none.
	p := &kubePlatform{}
	if err := p.checkRelease(context.Background(), r, stored()); err != nil {
		t.Fatalf("the release as recorded: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*helmrelease.Release)
		want   string
	}{
		{"its manifest", func(rel *helmrelease.Release) {
			rel.Manifest = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: coredns, namespace: kube-system}\n"
		}, "differs from what run " + run + " installed"},
		{"a hook added", func(rel *helmrelease.Release) {
			rel.Hooks = append(rel.Hooks, &helmrelease.Hook{Name: "grant", Manifest: "kind: ClusterRoleBinding\nmetadata: {name: grant}\n"})
		}, "differs from what run " + run + " installed"},
		{"a hook changed", func(rel *helmrelease.Release) {
			rel.Hooks[0].Manifest = "kind: ClusterRoleBinding\nmetadata: {name: grant}\n"
		}, "differs from what run " + run + " installed"},
		{"another run's label", func(rel *helmrelease.Release) {
			rel.Labels[labelRun] = "20260101-000000-ffffff"
		}, "is not run " + run + "'s"},
	} {
		rel := stored()
		tc.change(rel)
		if err := p.checkRelease(context.Background(), r, rel); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestWeakModes: every mTLS mode but STRICT (and UNSET, which inherits),
// for the workload or any port, makes a policy of the mesh's that selects
// meshbench's pods weaker than meshbench's STRICT.
func TestWeakModes(t *testing.T) {
	t.Parallel()
	spec := func(mode string, ports map[string]any) map[string]any {
		s := map[string]any{}
		if mode != "" {
			s["mtls"] = map[string]any{"mode": mode}
		}
		if ports != nil {
			s["portLevelMtls"] = ports
		}
		return map[string]any{"spec": s}
	}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"STRICT", spec("STRICT", nil), ""},
		{"UNSET", spec("UNSET", nil), ""},
		{"no mode", spec("", nil), ""},
		{"PERMISSIVE", spec("PERMISSIVE", nil), "PERMISSIVE"},
		{"DISABLE", spec("DISABLE", nil), "DISABLE"},
		{"a PERMISSIVE port under STRICT", spec("STRICT", map[string]any{"8080": map[string]any{"mode": "PERMISSIVE"}}), "PERMISSIVE"},
		{"both", spec("DISABLE", map[string]any{"8080": map[string]any{"mode": "PERMISSIVE"}, "9090": map[string]any{"mode": "DISABLE"}}), "DISABLE,PERMISSIVE"},
	} {
		if got := strings.Join(weakModes(tc.obj), ","); got != tc.want {
			t.Errorf("%s: weak modes %q, want %q", tc.name, got, tc.want)
		}
	}
}
