package dataplane

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

func TestSettingsFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    mesh.MeshSpec
		want    func(Settings) string // "" when right, else what is wrong
		wantErr string
	}{
		{name: "empty is baseline", spec: mesh.MeshSpec{}, want: func(s Settings) string {
			if s.Profile != mesh.ProfileBaseline {
				return "profile " + s.Profile
			}
			return ""
		}},
		{name: "istio defaults", spec: mesh.MeshSpec{Profile: "sidecar"}, want: func(s Settings) string {
			switch {
			case s.Workers != 2:
				return "workers"
			case s.Sidecar != resources.Requirements{CPURequestMilli: 100, CPULimitMilli: 2000, MemRequestBytes: 128 << 20, MemLimitBytes: 1 << 30}:
				return "sidecar resources"
			case s.NodeProxy != resources.Requirements{CPURequestMilli: 200, MemRequestBytes: 512 << 20}:
				return "node proxy resources"
			case s.WaypointReplicas != 1:
				return "waypoint replicas"
			}
			return ""
		}},
		{name: "overrides", spec: mesh.MeshSpec{Profile: "ambient", Workers: 4, ProxyCPU: "250m", ProxyMemory: "256Mi",
			NodeProxyCPU: "1", NodeProxyMemory: "1Gi", WaypointReplicas: 3}, want: func(s Settings) string {
			switch {
			case s.Workers != 4 || s.WaypointReplicas != 3:
				return "counts"
			case s.Sidecar.CPURequestMilli != 250 || s.Sidecar.MemRequestBytes != 256<<20 || s.Waypoint.CPURequestMilli != 250:
				return "proxy sizes"
			case s.NodeProxy.CPURequestMilli != 1000 || s.NodeProxy.MemRequestBytes != 1<<30:
				return "node proxy sizes"
			case s.NodeProxy.CPULimitMilli != 0 || s.NodeProxy.MemLimitBytes != 0:
				return "node proxy gained limits"
			}
			return ""
		}},
		{name: "unknown profile", spec: mesh.MeshSpec{Profile: "linkerd2"}, wantErr: "unknown on lab; known:"},
		{name: "bad quantity", spec: mesh.MeshSpec{Profile: "sidecar", ProxyCPU: "lots"}, wantErr: "proxy_cpu"},
		{name: "negative workers", spec: mesh.MeshSpec{Profile: "sidecar", Workers: -1}, wantErr: "negative"},
		{name: "injected work", spec: mesh.MeshSpec{Profile: "sidecar", InjectedWork: 20000}, want: func(s Settings) string {
			if s.InjectedWork != 20000 {
				return "injected work not carried"
			}
			return ""
		}},
		{name: "injected work without sidecars", spec: mesh.MeshSpec{Profile: "ambient", InjectedWork: 1}, wantErr: "has none"},
		{name: "injected work under istiod", spec: mesh.MeshSpec{Profile: "sidecar", ControlPlane: mesh.ControlPlaneIstiod, InjectedWork: 1}, wantErr: "istiod configures"},
		{name: "injected work too large", spec: mesh.MeshSpec{Profile: "sidecar", InjectedWork: mesh.MaxInjectedWork + 1}, wantErr: "injected_work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := SettingsFor(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bad := tt.want(s); bad != "" {
				t.Errorf("%s wrong: %+v", bad, s)
			}
		})
	}
}
