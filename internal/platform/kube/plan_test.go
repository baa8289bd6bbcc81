package kube

import (
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

func testPlatformFor(t *testing.T, graph string) *kubePlatform {
	t.Helper()
	return &kubePlatform{
		workload:   &platform.Workload{Graph: testGraph(t, graph), Namespaces: 2},
		namespaces: topology.Namespaces(2),
		places: map[infra.NodeRole]placement{
			infra.NodeApp:  testPlacement,
			infra.NodeMesh: {NodeSelector: map[string]string{labelRole: "mesh"}},
		},
	}
}

func release(t *testing.T, pl meshPlan, name string) helmRelease {
	t.Helper()
	for _, r := range pl.Releases {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no release %s in %+v", name, pl.Releases)
	return helmRelease{}
}

// dig returns a nested value of chart values, by dotted path.
func dig(v map[string]any, path string) any {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func TestIstioPlan(t *testing.T) {
	t.Parallel()
	p := testPlatformFor(t, "tiered")
	tests := []struct {
		name     string
		spec     mesh.MeshSpec
		releases string
		nsLabels map[string]string
		values   map[string]map[string]any // release -> path -> value
		objects  int
	}{
		{
			name: "sidecar, the studies' defaults", spec: mesh.MeshSpec{Profile: mesh.ProfileSidecar},
			releases: "istio-base,istiod", nsLabels: map[string]string{labelInjection: "enabled"},
			values: map[string]map[string]any{"istiod": {
				"global.proxy.resources.requests.cpu": "100m", "global.proxy.resources.requests.memory": "128Mi",
				"meshConfig.defaultConfig.concurrency": 2, "pilot.nodeSelector": map[string]any{labelRole: "mesh"}, "profile": nil,
			}},
			objects: 2, // a PeerAuthentication per namespace
		},
		{
			name: "ambient with settings", spec: mesh.MeshSpec{Profile: mesh.ProfileAmbient, Workers: 4, NodeProxyCPU: "1", NodeProxyMemory: "1Gi"},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient"},
			values: map[string]map[string]any{
				"istiod":    {"profile": "ambient", "meshConfig.defaultConfig.concurrency": 4},
				"ztunnel":   {"resources.requests.cpu": "1", "resources.requests.memory": "1Gi", "env.ZTUNNEL_WORKER_THREADS": "4"},
				"istio-cni": {"profile": "ambient", "cni.resources.requests.cpu": "100m", "cni.resources.requests.memory": "100Mi"},
			},
			objects: 2,
		},
		{
			name: "ambient defaults for ztunnel", spec: mesh.MeshSpec{Profile: mesh.ProfileAmbientL4Policy},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient"},
			values:  map[string]map[string]any{"ztunnel": {"resources.requests.cpu": "200m", "resources.requests.memory": "512Mi"}},
			objects: 2 + 2*4, // and a policy per service per namespace
		},
		{
			name: "waypoint", spec: mesh.MeshSpec{Profile: mesh.ProfileAmbientWaypoint},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient", labelUseWaypoint: waypointName},
			values:  map[string]map[string]any{"istiod": {"global.waypoint.resources.requests.cpu": "100m"}},
			objects: 2 + 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := p.plan(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range pl.Releases {
				names = append(names, r.Name)
				if r.Namespace != istioNamespace {
					t.Errorf("release %s in %s", r.Name, r.Namespace)
				}
			}
			if got := strings.Join(names, ","); got != tc.releases {
				t.Errorf("releases = %s, want %s", got, tc.releases)
			}
			if !reflect.DeepEqual(pl.NSLabels, tc.nsLabels) {
				t.Errorf("namespace labels = %v, want %v", pl.NSLabels, tc.nsLabels)
			}
			for rel, paths := range tc.values {
				vals := release(t, pl, rel).Values
				for path, want := range paths {
					if got := dig(vals, path); !reflect.DeepEqual(got, want) {
						t.Errorf("%s values %s = %#v, want %#v", rel, path, got, want)
					}
				}
			}
			if len(pl.Objects) != tc.objects {
				t.Errorf("%d mesh objects, want %d", len(pl.Objects), tc.objects)
			}
		})
	}
}

func TestLinkerdPlan(t *testing.T) {
	t.Parallel()
	p := testPlatformFor(t, "tiered")
	pl, err := p.plan(mesh.MeshSpec{Profile: mesh.ProfileLinkerd})
	if err != nil {
		t.Fatal(err)
	}
	cp := release(t, pl, "linkerd-control-plane").Values
	if dig(cp, "proxy.resources.cpu.request") != "100m" || dig(cp, "proxy.resources.memory.request") != "128Mi" {
		t.Errorf("proxy requests = %v, want the 50-tenant study's 100m / 128Mi", dig(cp, "proxy.resources"))
	}
	if pl.NSAnnotations[annotLinkerdInject] != "enabled" || pl.NSAnnotations[annotLinkerdInbound] != "all-authenticated" {
		t.Errorf("namespace annotations = %v", pl.NSAnnotations)
	}
	// The issuer must chain to the trust anchor, or no proxy gets an
	// identity.
	parse := func(s string) *x509.Certificate {
		b, _ := pem.Decode([]byte(s))
		if b == nil {
			t.Fatalf("not PEM: %q", s)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	anchor := parse(cp["identityTrustAnchorsPEM"].(string))
	issuer := parse(dig(cp, "identity.issuer.tls.crtPEM").(string))
	roots := x509.NewCertPool()
	roots.AddCert(anchor)
	if _, err := issuer.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: time.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Errorf("issuer does not chain to the anchor: %v", err)
	}
	if !issuer.IsCA || issuer.Subject.CommonName != "identity.linkerd.cluster.local" {
		t.Errorf("issuer = CA %v, CN %s", issuer.IsCA, issuer.Subject.CommonName)
	}
	if b, _ := pem.Decode([]byte(dig(cp, "identity.issuer.tls.keyPEM").(string))); b == nil || b.Type != "EC PRIVATE KEY" {
		t.Error("issuer key is not a PEM EC key")
	}
}

func TestCiliumPlan(t *testing.T) {
	t.Parallel()
	p := testPlatformFor(t, "tiered")
	pl, err := p.plan(mesh.MeshSpec{Profile: mesh.ProfileCilium})
	if err != nil {
		t.Fatal(err)
	}
	// Cilium is the cluster's network plugin: no chart, ever.
	if len(pl.Releases) != 0 || len(pl.Namespaces) != 0 {
		t.Errorf("cilium plan installs %d releases in %v, want none", len(pl.Releases), pl.Namespaces)
	}
	if len(pl.Objects) != 2 || dig(pl.Objects[0].Object, "spec.ingress") == nil {
		t.Fatalf("want a mutual-auth policy per namespace, got %d objects", len(pl.Objects))
	}
	rule := pl.Objects[0].Object["spec"].(map[string]any)["ingress"].([]any)[0].(map[string]any)
	if dig(rule, "authentication.mode") != "required" {
		t.Errorf("policy rule %v does not require mutual authentication", rule)
	}
}

func TestUnknownProfile(t *testing.T) {
	t.Parallel()
	_, err := testPlatformFor(t, "tiered").plan(mesh.MeshSpec{Profile: "consul"})
	if err == nil || !strings.Contains(err.Error(), "ambient-waypoint") {
		t.Errorf("err = %v, want one listing the known profiles", err)
	}
}

func TestCallers(t *testing.T) {
	t.Parallel()
	got := callers("ns-3", testGraph(t, "tiered"), false)
	want := map[string][]any{
		"tier-1-app-a": {"cluster.local/ns/ns-3/sa/meshbench-load"},
		"tier-2-app-a": {"cluster.local/ns/ns-3/sa/tier-1-app-a"},
		"tier-2-app-b": {"cluster.local/ns/ns-3/sa/tier-1-app-a"},
		"tier-3-app-a": {"cluster.local/ns/ns-3/sa/tier-2-app-a", "cluster.local/ns/ns-3/sa/tier-2-app-b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("callers = %v, want %v", got, want)
	}
}

// TestIngressPlan checks what the ingress adds to each kind of mesh: the
// Istio gateway chart after istiod on the mesh node, or the plain gateway;
// the outside namespace; and, with waypoints, ingress through them.
func TestIngressPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		profile    string
		release    bool
		namespaces string
		waypoint   bool
	}{
		{mesh.ProfileBaseline, false, "meshbench-outside,meshbench-ingress", false},
		{mesh.ProfileSidecar, true, "istio-system,meshbench-outside", false},
		{mesh.ProfileAmbientWaypoint, true, "istio-system,meshbench-outside", true},
		{mesh.ProfileLinkerd, false, "linkerd,meshbench-outside,meshbench-ingress", false},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			p := testPlatformFor(t, "bookinfo")
			p.opts.Ingress, p.opts.GatewayImage = true, defaultGatewayImage
			pl, err := p.plan(mesh.MeshSpec{Profile: tc.profile})
			if err != nil {
				t.Fatal(err)
			}
			if !pl.Ingress || strings.Join(pl.Namespaces, ",") != tc.namespaces {
				t.Errorf("ingress %v, namespaces %v; want %s", pl.Ingress, pl.Namespaces, tc.namespaces)
			}
			last := ""
			if n := len(pl.Releases); n > 0 {
				last = pl.Releases[n-1].Name
			}
			if (last == ingressGatewayName) != tc.release {
				t.Errorf("last release %q, want the Istio gateway: %v", last, tc.release)
			}
			if tc.release {
				r := release(t, pl, ingressGatewayName)
				if dig(r.Values, "serviceAccount.name") != ingressAccount || r.Values["nodeSelector"].(map[string]any)[labelRole] != "mesh" {
					t.Errorf("gateway values %v", r.Values)
				}
			}
			if (pl.NSLabels[labelIngressUseWaypoint] == "true") != tc.waypoint {
				t.Errorf("namespace labels %v, want ingress through the waypoint: %v", pl.NSLabels, tc.waypoint)
			}
		})
	}
}

// TestUseExistingPlan: with use_existing the plan installs no chart (so
// RemoveMesh, which uninstalls the run's releases only, has none of the
// mesh's to remove) and keeps everything meshbench applies itself.
func TestUseExistingPlan(t *testing.T) {
	t.Parallel()
	p := testPlatformFor(t, "tiered")
	for _, profile := range []string{mesh.ProfileSidecar, mesh.ProfileAmbient, mesh.ProfileLinkerd} {
		own, err := p.plan(mesh.MeshSpec{Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		existing, err := p.plan(mesh.MeshSpec{Profile: profile, UseExisting: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(own.Releases) == 0 {
			t.Fatalf("%s: meshbench's own install has no charts", profile)
		}
		if len(existing.Releases) != 0 {
			t.Errorf("%s with use_existing installs %d charts, want none", profile, len(existing.Releases))
		}
		if !reflect.DeepEqual(existing.NSLabels, own.NSLabels) || len(existing.Objects) != len(own.Objects) ||
			!reflect.DeepEqual(existing.Namespaces, own.Namespaces) {
			t.Errorf("%s with use_existing: labels %v, %d objects, namespaces %v; want those of meshbench's own install: %v, %d, %v",
				profile, existing.NSLabels, len(existing.Objects), existing.Namespaces, own.NSLabels, len(own.Objects), own.Namespaces)
		}
	}
}

// TestUseExistingTouchesOnlyItsNamespaces: with use_existing, everything
// meshbench applies goes in the workload's namespaces, which it made; the
// mesh's own namespace and policies are the cluster's, and a study with
// an ingress, whose gateway would be the cluster's, is refused with the
// fix.
func TestUseExistingTouchesOnlyItsNamespaces(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{mesh.ProfileSidecar, mesh.ProfileSidecarL7Policy, mesh.ProfileAmbient, mesh.ProfileAmbientL4Policy,
		mesh.ProfileAmbientWaypoint, mesh.ProfileWaypointL7Policy, mesh.ProfileLinkerd} {
		p := testPlatformFor(t, "tiered")
		pl, err := p.plan(mesh.MeshSpec{Profile: profile, UseExisting: true})
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]bool{}
		for _, ns := range p.namespaces {
			own[ns] = true
		}
		for _, o := range pl.Objects {
			if !own[o.GetNamespace()] {
				t.Errorf("%s with use_existing applies %s outside the workload's namespaces", profile, describe(o))
			}
		}
	}
	p := testPlatformFor(t, "tiered")
	p.opts.Ingress, p.opts.GatewayImage = true, defaultGatewayImage
	for _, profile := range []string{mesh.ProfileSidecar, mesh.ProfileAmbientWaypoint} {
		_, err := p.plan(mesh.MeshSpec{Profile: profile, UseExisting: true})
		if err == nil || !strings.Contains(err.Error(), "use_existing") || !strings.Contains(err.Error(), "ingress") {
			t.Errorf("%s with use_existing and an ingress: %v, want a refusal naming both", profile, err)
		}
	}
}
