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

func TestRegisterRefusesTakenNames(t *testing.T) {
	t.Parallel()
	if err := Register(Family{Name: Istio}); err == nil || !strings.Contains(err.Error(), `family "istio"`) {
		t.Errorf("a second istio family: %v", err)
	}
	if err := Register(Family{Name: "kuma-" + t.Name()}, Profile{Name: ProfileSidecar}); err == nil || !strings.Contains(err.Error(), `profile "sidecar"`) {
		t.Errorf("a second sidecar profile: %v", err)
	}
	if _, ok := LookupProfile(ProfileSidecar); !ok || ProfileNames("") == nil {
		t.Fatal("the registry lost its profiles")
	}
	if f := must(t, ProfileSidecar).Family(); f.Name != Istio || f.SidecarContainer != "istio-proxy" || f.Proxy != DefaultProxy {
		t.Errorf("sidecar's family = %+v, want Istio's with istio-proxy and the default proxy resources", f)
	}
	if !IsSidecarContainer("linkerd-proxy") || IsSidecarContainer("app") || IsSidecarContainer("") {
		t.Error("IsSidecarContainer does not know the families' sidecars")
	}
}

func must(t *testing.T, name string) Profile {
	t.Helper()
	p, ok := LookupProfile(name)
	if !ok {
		t.Fatalf("no profile %q", name)
	}
	return p
}

func TestChartsFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		profile string
		ingress bool
		want    string
	}{
		{ProfileBaseline, true, ""},
		{ProfileSidecar, false, "istio-base,istiod"},
		{ProfileAmbientWaypoint, true, "istio-base,istiod,istio-cni,ztunnel,istio-gateway"},
		{ProfileLinkerd, true, "linkerd-crds,linkerd-control-plane"},
		{ProfileCilium, true, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(must(t, tt.profile).ChartsFor(tt.ingress), ","); got != tt.want {
			t.Errorf("%s (ingress %v) installs %q, want %q", tt.profile, tt.ingress, got, tt.want)
		}
	}
}
