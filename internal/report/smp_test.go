package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
)

// TestSMPRealLabRun exports the results of a real `meshbench run --study
// quick --scale 0.5` on the lab (testdata/lab-quick: its index and the
// first repetition's cells, as the run wrote them): mTLS comes from the
// checks that proved it, Envoy's version from the provenance, and the lab
// is not passed off as Istio.
func TestSMPRealLabRun(t *testing.T) {
	t.Parallel()
	d, err := analysis.Load("testdata/lab-quick", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSMP(&buf, d); err != nil {
		t.Fatal(err)
	}
	var x smpExport
	if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
		t.Fatal(err)
	}
	envoy := d.Index.Provenance.Platform.EnvoyVersion
	if envoy == "" || x.Environment.Labels["meshbench.envoy_version"] != envoy {
		t.Errorf("environment labels %v lack the recorded Envoy version %q", x.Environment.Labels, envoy)
	}
	seen := map[string]bool{}
	for _, m := range x.MeshConfigs {
		seen[m.Profile] = true
		switch m.Profile {
		case mesh.ProfileSidecar, mesh.ProfileAmbient:
			if !m.MTLSEnabled || !strings.Contains(m.Labels["meshbench.mtls_evidence"], mesh.CheckPeerIdentity+": ") {
				t.Errorf("%s: mTLS not exported from its checks: %+v", m.Profile, m)
			}
			if m.ProxyBuild != envoy || m.MeshType != nil || m.MeshBuild != "" || m.Labels["meshbench.emulates"] != "istio" ||
				!strings.HasPrefix(m.Labels["meshbench.dataplane"], "upstream Envoy as Istio") {
				t.Errorf("%s: not exported as upstream Envoy %s in Istio's role: %+v", m.Profile, envoy, m)
			}
		case mesh.ProfileBaseline:
			if m.MTLSEnabled || m.MeshType != nil || m.ProxyBuild != "" {
				t.Errorf("baseline exported as a mesh: %+v", m)
			}
		}
	}
	for _, p := range []string{mesh.ProfileBaseline, mesh.ProfileSidecar, mesh.ProfileAmbient} {
		if !seen[p] {
			t.Errorf("no mesh config for %s", p)
		}
	}
}

func TestSMPMeshFromProvenance(t *testing.T) {
	t.Parallel()
	kube := infra.Info{Name: infra.Kubernetes, Versions: map[string]string{
		"release/istiod": "1.27.1", "release/ztunnel": "1.27.1", "chart/cilium": "1.20.2"}}
	proven := []mesh.Check{
		{Name: mesh.CheckPlaintextRefused, Pass: true, Detail: "refused"},
		{Name: mesh.CheckPeerIdentity, Pass: true, Detail: "seen"},
	}
	tests := []struct {
		name      string
		mesh      string // the user's name for it, which must not matter
		profile   string
		info      infra.Info
		checks    []mesh.Check
		wantType  string
		wantBuild string
		wantProxy string
		wantMTLS  bool
	}{
		{"istio sidecar on kubernetes", "linkerd-lookalike", mesh.ProfileSidecar, kube, proven, "ISTIO", "1.27.1", "", true},
		{"ambient proxy is ztunnel", "x", mesh.ProfileAmbient, kube, proven, "ISTIO", "1.27.1", "1.27.1", true},
		{"cilium is the cluster's: no version meshbench installed", "istio", mesh.ProfileCilium, kube, nil, "CILIUM_SERVICE_MESH", "", "", false},
		{"linkerd unrecorded", "istio-sidecar", mesh.ProfileLinkerd, kube, proven[:1], "LINKERD", "", "", false},
		{"plaintext refused but no identity", "sidecar", mesh.ProfileSidecar, kube,
			[]mesh.Check{proven[0], {Name: mesh.CheckPeerIdentity, Detail: "0 of 4"}}, "ISTIO", "1.27.1", "", false},
		{"lab is not Istio", "istio-sidecar", mesh.ProfileSidecar, infra.Info{Name: infra.Lab, EnvoyVersion: "1.40.0"}, proven, "", "", "1.40.0", true},
		{"a mesh name alone is not a mesh", "istio-ambient", mesh.ProfileBaseline, kube, nil, "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &analysis.Dataset{Index: &results.Index{Provenance: results.Provenance{Platform: tc.info}}}
			r := &analysis.Rep{}
			r.Summary.Mesh, r.Summary.Profile, r.Summary.Verification = tc.mesh, tc.profile, tc.checks
			m := smpMesh(d, r)
			gotType := ""
			if m.MeshType != nil {
				gotType = m.MeshType.Type
			}
			if gotType != tc.wantType || m.MeshBuild != tc.wantBuild || m.ProxyBuild != tc.wantProxy || m.MTLSEnabled != tc.wantMTLS {
				t.Errorf("type %q build %q proxy %q mtls %v, want %q %q %q %v",
					gotType, m.MeshBuild, m.ProxyBuild, m.MTLSEnabled, tc.wantType, tc.wantBuild, tc.wantProxy, tc.wantMTLS)
			}
		})
	}
}
