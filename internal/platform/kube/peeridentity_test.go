package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

// TestIdentityCount parses metrics as each mesh's proxies expose them
// (testdata/peer-identity: written in each proxy's exposition format
// with the labels its documentation names, not captured from a live
// cluster, which this machine cannot run) and counts only the calls the
// server side accepted over mTLS from the caller's identity.
func TestIdentityCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		ev   identityEvidence
		ns   string
		sa   string
		want float64
	}{
		// The destination's mTLS requests; not its plaintext ones
		// (connection_security_policy "none") nor what it sent as a client.
		{"istio-sidecar.prom", istioProxyEvidence, "ns-1", loadServiceAccount, 10},
		{"istio-sidecar.prom", istioProxyEvidence, "ns-1", probeServiceAccount, 0},
		{"istio-sidecar.prom", istioProxyEvidence, "ns-2", loadServiceAccount, 0},
		// ztunnel: the destination's count, not the source's.
		{"ztunnel.prom", ztunnelEvidence, "ns-1", loadServiceAccount, 2},
		{"ztunnel.prom", ztunnelEvidence, "ns-1", "tier-1-app-a", 0},
		// linkerd-proxy: inbound requests and connections with tls="true"
		// and the client's identity; not plaintext (no_identity) nor
		// outbound.
		{"linkerd.prom", linkerdEvidence, "ns-1", loadServiceAccount, 12},
		{"linkerd.prom", linkerdEvidence, "ns-1", probeServiceAccount, 0},
		// A mesh's evidence is not read from another's metrics.
		{"linkerd.prom", istioProxyEvidence, "ns-1", loadServiceAccount, 0},
		{"istio-sidecar.prom", linkerdEvidence, "ns-1", loadServiceAccount, 0},
	}
	for _, tc := range tests {
		f, err := os.Open(filepath.Join("testdata", "peer-identity", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := tc.ev.identityCount(f, tc.ns, tc.sa)
		f.Close()
		if err != nil || got != tc.want {
			t.Errorf("%s, %v, %s/%s: %g, %v; want %g", tc.file, tc.ev.Metrics, tc.ns, tc.sa, got, err, tc.want)
		}
	}
	// What is not an exposition is an error, not a zero.
	if _, err := istioProxyEvidence.identityCount(strings.NewReader("<html>502 Bad Gateway</html>\n"), "ns-1", loadServiceAccount); err == nil {
		t.Error("an HTML page parsed as metrics")
	}
}

// TestEvidenceSources: each mesh's evidence is read where its server
// side terminates the caller's mTLS; Cilium and no mesh have none.
func TestEvidenceSources(t *testing.T) {
	t.Parallel()
	g, err := topology.Builtin("tiered")
	if err != nil {
		t.Fatal(err)
	}
	p := &kubePlatform{workload: &platform.Workload{Graph: g, Namespaces: 1}, namespaces: topology.Namespaces(1)}
	entry := "app=tier-1-app-a,meshbench.io/component=app"
	tests := []struct {
		profile string
		source  [2]string
		port    int
	}{
		{mesh.ProfileSidecar, [2]string{"ns-1", entry}, 15090},
		{mesh.ProfileSidecarL7Policy, [2]string{"ns-1", entry}, 15090},
		{mesh.ProfileLinkerd, [2]string{"ns-1", entry}, 4191},
		{mesh.ProfileAmbient, [2]string{istioNamespace, "app=ztunnel"}, 15020},
		{mesh.ProfileAmbientL4Policy, [2]string{istioNamespace, "app=ztunnel"}, 15020},
		{mesh.ProfileAmbientWaypoint, [2]string{"ns-1", labelGatewayName + "=" + waypointName}, 15090},
	}
	for _, tc := range tests {
		src, ev, ok := p.evidenceSources(mustProfile(t, tc.profile), "ns-1")
		if !ok || len(src) != 1 || src[0] != tc.source || ev.Port != tc.port {
			t.Errorf("%s: sources %v port %d (%v), want %v port %d", tc.profile, src, ev.Port, ok, tc.source, tc.port)
		}
	}
	for _, name := range []string{mesh.ProfileCilium, mesh.ProfileBaseline} {
		if _, _, ok := p.evidenceSources(mustProfile(t, name), "ns-1"); ok {
			t.Errorf("%s has peer-identity evidence", name)
		}
	}
}
