package mesh

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/infra"
)

func TestProfileNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		platform string
		want     string
	}{
		{infra.Lab, "ambient,ambient-l4-policy,ambient-waypoint,baseline,sidecar,sidecar-l7-policy,waypoint-l7-policy"},
		{infra.Kubernetes, "ambient,ambient-l4-policy,ambient-waypoint,baseline,cilium,linkerd,sidecar,sidecar-l7-policy,waypoint-l7-policy"},
		{"nomad", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(ProfileNames(tt.platform), ","); got != tt.want {
			t.Errorf("ProfileNames(%q) = %s, want %s", tt.platform, got, tt.want)
		}
	}
}

func TestProfileOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, platform, wantErr string
		sidecars, nodeProxies   bool
	}{
		{name: "sidecar", platform: infra.Lab, sidecars: true},
		{name: "waypoint-l7-policy", platform: infra.Lab, nodeProxies: true},
		{name: "linkerd", platform: infra.Kubernetes, sidecars: true},
		{name: "cilium", platform: infra.Kubernetes},
		{name: "linkerd", platform: infra.Lab, wantErr: `mesh profile "linkerd": unknown on lab; known: ambient,`},
		{name: "kuma", platform: infra.Kubernetes, wantErr: "unknown on kubernetes"},
	}
	for _, tt := range tests {
		p, err := ProfileOn(tt.name, tt.platform)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s on %s: error %v, want %q", tt.name, tt.platform, err, tt.wantErr)
			}
			continue
		}
		if err != nil || p.Name != tt.name || p.Sidecars() != tt.sidecars || p.NodeProxies() != tt.nodeProxies {
			t.Errorf("%s on %s = %+v, %v", tt.name, tt.platform, p, err)
		}
	}
}
