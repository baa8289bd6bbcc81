package kube

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, labels map[string]string, ready bool, taints ...corev1.Taint) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}},
	}
}

func TestMatchNodes(t *testing.T) {
	t.Parallel()
	loadTaint := corev1.Taint{Key: "dedicated", Value: "load", Effect: corev1.TaintEffectNoSchedule}
	nodes := []corev1.Node{
		node("a1", map[string]string{labelRole: "app", "pool": "apps"}, true),
		node("a2", map[string]string{labelRole: "app", "pool": "apps2"}, true),
		node("l1", map[string]string{labelRole: "load"}, true, loadTaint),
		node("down", map[string]string{labelRole: "mesh"}, false),
	}
	tests := []struct {
		name      string
		specs     []infra.NodeSpec
		wantErr   []string
		wantNodes map[infra.NodeRole][]string
		wantPlace map[infra.NodeRole]placement
	}{
		{
			name:      "default role labels and a taint",
			specs:     []infra.NodeSpec{{Role: infra.NodeApp}, {Role: infra.NodeLoad, Taints: []string{"dedicated=load:NoSchedule"}}},
			wantNodes: map[infra.NodeRole][]string{infra.NodeApp: {"a1"}, infra.NodeLoad: {"l1"}},
			wantPlace: map[infra.NodeRole]placement{
				infra.NodeApp: {NodeSelector: map[string]string{labelRole: "app"}},
				infra.NodeLoad: {NodeSelector: map[string]string{labelRole: "load"}, Tolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "load", Effect: corev1.TaintEffectNoSchedule}}},
			},
		},
		{
			name: "two app nodes keep only the labels they share",
			specs: []infra.NodeSpec{
				{Role: infra.NodeApp, Labels: map[string]string{labelRole: "app", "pool": "apps"}},
				{Role: infra.NodeApp, Labels: map[string]string{labelRole: "app", "pool": "apps2"}},
			},
			wantNodes: map[infra.NodeRole][]string{infra.NodeApp: {"a1", "a2"}},
			wantPlace: map[infra.NodeRole]placement{infra.NodeApp: {NodeSelector: map[string]string{labelRole: "app"}}},
		},
		{
			name:    "a not-ready node does not count",
			specs:   []infra.NodeSpec{{Role: infra.NodeMesh}},
			wantErr: []string{"nodes[0] role mesh", "meshbench.io/role=mesh", "kubectl label node"},
		},
		{
			name:    "a node serves one spec only",
			specs:   []infra.NodeSpec{{Role: infra.NodeLoad}, {Role: infra.NodeLoad}},
			wantErr: []string{"nodes[1] role load"},
		},
		{
			name:    "taint the node lacks",
			specs:   []infra.NodeSpec{{Role: infra.NodeApp, Taints: []string{"dedicated=app:NoSchedule"}}},
			wantErr: []string{"taints dedicated=app:NoSchedule"},
		},
		{
			name:    "malformed taint",
			specs:   []infra.NodeSpec{{Role: infra.NodeApp, Taints: []string{"dedicated=app"}}},
			wantErr: []string{"want key=value:Effect"},
		},
		{
			name:    "unknown effect",
			specs:   []infra.NodeSpec{{Role: infra.NodeApp, Taints: []string{"k:Sometimes"}}},
			wantErr: []string{"NoSchedule, PreferNoSchedule or NoExecute"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			places, assigned, err := matchNodes(tc.specs, append([]corev1.Node{}, nodes...))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for role, want := range tc.wantNodes {
				if strings.Join(assigned[role], ",") != strings.Join(want, ",") {
					t.Errorf("%s nodes = %v, want %v", role, assigned[role], want)
				}
			}
			for role, want := range tc.wantPlace {
				got := places[role]
				if len(got.NodeSelector) != len(want.NodeSelector) {
					t.Errorf("%s selector = %v, want %v", role, got.NodeSelector, want.NodeSelector)
				}
				for k, v := range want.NodeSelector {
					if got.NodeSelector[k] != v {
						t.Errorf("%s selector = %v, want %v", role, got.NodeSelector, want.NodeSelector)
					}
				}
				if len(got.Tolerations) != len(want.Tolerations) || (len(want.Tolerations) > 0 && got.Tolerations[0] != want.Tolerations[0]) {
					t.Errorf("%s tolerations = %v, want %v", role, got.Tolerations, want.Tolerations)
				}
			}
		})
	}
}
