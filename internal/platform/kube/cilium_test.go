package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestCheckProfiles checks the preflight that refuses the cilium profile
// on a cluster that does not run Cilium as the profile needs it, naming
// the fix, and lets the other profiles pass on any cluster.
func TestCheckProfiles(t *testing.T) {
	t.Parallel()
	agent := func(ready int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ciliumNamespace, Name: ciliumAgent, Generation: 1},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3,
				NumberReady: ready, NumberUnavailable: 3 - ready},
		}
	}
	config := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ciliumNamespace, Name: ciliumConfig}, Data: data}
	}
	full := map[string]string{"enable-wireguard": "true", "mesh-auth-enabled": "true", "mesh-auth-mutual-enabled": "true"}
	tests := []struct {
		name     string
		profiles []string
		objs     []runtime.Object
		wantErr  []string
	}{
		{name: "istio on a plain cluster", profiles: []string{mesh.ProfileBaseline, mesh.ProfileAmbient}},
		{name: "cilium on a cluster without Cilium", profiles: []string{mesh.ProfileBaseline, mesh.ProfileCilium},
			wantErr: []string{"profile cilium", "does not run Cilium", "never installs"}},
		{name: "cilium agent not ready", profiles: []string{mesh.ProfileCilium}, objs: []runtime.Object{agent(2), config(full)},
			wantErr: []string{"2 of 3 agents ready"}},
		{name: "cilium without mutual auth", profiles: []string{mesh.ProfileCilium},
			objs:    []runtime.Object{agent(3), config(map[string]string{"enable-wireguard": "true"})},
			wantErr: []string{"lacks mesh-auth-enabled, mesh-auth-mutual-enabled", "authentication.mutual.spire.enabled=true"}},
		{name: "cilium as the study ran it", profiles: []string{mesh.ProfileCilium}, objs: []runtime.Object{agent(3), config(full)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var meshes []mesh.MeshSpec
			for _, pr := range tc.profiles {
				meshes = append(meshes, mesh.MeshSpec{Profile: pr})
			}
			p := &kubePlatform{opts: Options{Meshes: meshes}, c: &clients{kube: fake.NewClientset(tc.objs...)}}
			err := p.checkProfiles(context.Background())
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("checkProfiles: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("checkProfiles passed, want a refusal")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
