package cluster

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestResolveTarget(t *testing.T) {
	t.Parallel()
	st := State{Name: "demo",
		Nodes: []Node{{Name: "app-1", Netns: "mb-n-app-1"}},
		Pods: []Pod{
			{Namespace: "ns-1", Name: "load", Netns: "mb-p-ns-1_load"},
			{Namespace: "ns-2", Name: "load", Netns: "mb-p-ns-2_load"},
			{Namespace: "ns-1", Name: "web-0", Netns: "mb-p-ns-1_web-0"},
		}}
	tests := []struct {
		name, target, netns, namespace, wantErr string
	}{
		{name: "namespaced pod", target: "ns-2/load", netns: "mb-p-ns-2_load", namespace: "ns-2"},
		{name: "unique pod name", target: "web-0", netns: "mb-p-ns-1_web-0", namespace: "ns-1"},
		{name: "node", target: "node/app-1", netns: "mb-n-app-1"},
		{name: "ambiguous name", target: "load", wantErr: "ns-1/load, ns-2/load"},
		{name: "unknown pod", target: "nope", wantErr: "no pod"},
		{name: "unknown node", target: "node/x", wantErr: "no node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			netns, ns, err := st.resolve(tt.target)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || netns != tt.netns || ns != tt.namespace {
				t.Errorf("resolve = %q, %q, %v; want %q, %q", netns, ns, err, tt.netns, tt.namespace)
			}
		})
	}
}

func TestServiceEnv(t *testing.T) {
	t.Parallel()
	svcs := []Service{
		{ServiceSpec: ServiceSpec{Namespace: "ns-1", Name: "tier-1-app-a", Port: 8080}, VIP: netip.MustParseAddr("10.96.0.10")},
		{ServiceSpec: ServiceSpec{Namespace: "ns-2", Name: "other", Port: 80}, VIP: netip.MustParseAddr("10.96.0.11")},
	}
	got := serviceEnv(svcs, "ns-1")
	want := []string{"TIER_1_APP_A_SERVICE_HOST=10.96.0.10", "TIER_1_APP_A_SERVICE_PORT=8080"}
	if !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
}
