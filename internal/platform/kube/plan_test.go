package kube

import (
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

func testPlatformFor(t *testing.T, graph string) *kubePlatform {
	t.Helper()
	return &kubePlatform{
		workload:   &platform.Workload{Graph: testGraph(t, graph), Namespaces: 2},
		namespaces: topology.Namespaces(2),
		places: map[platform.NodeRole]placement{
			platform.NodeApp:  testPlacement,
			platform.NodeMesh: {NodeSelector: map[string]string{labelRole: "mesh"}},
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
		spec     platform.MeshSpec
		releases string
		nsLabels map[string]string
		values   map[string]map[string]any // release -> path -> value
		objects  int
	}{
		{
			name: "sidecar, the studies' defaults", spec: platform.MeshSpec{Profile: platform.ProfileSidecar},
			releases: "istio-base,istiod", nsLabels: map[string]string{labelInjection: "enabled"},
			values: map[string]map[string]any{"istiod": {
				"global.proxy.resources.requests.cpu": "100m", "global.proxy.resources.requests.memory": "128Mi",
				"meshConfig.defaultConfig.concurrency": 2, "pilot.nodeSelector": map[string]any{labelRole: "mesh"}, "profile": nil,
			}},
			objects: 1, // PeerAuthentication
		},
		{
			name: "ambient with settings", spec: platform.MeshSpec{Profile: platform.ProfileAmbient, Workers: 4, NodeProxyCPU: "1", NodeProxyMemory: "1Gi"},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient"},
			values: map[string]map[string]any{
				"istiod":    {"profile": "ambient", "meshConfig.defaultConfig.concurrency": 4},
				"ztunnel":   {"resources.requests.cpu": "1", "resources.requests.memory": "1Gi", "env.ZTUNNEL_WORKER_THREADS": "4"},
				"istio-cni": {"profile": "ambient", "cni.resources.requests.cpu": "100m", "cni.resources.requests.memory": "100Mi"},
			},
			objects: 1,
		},
		{
			name: "ambient defaults for ztunnel", spec: platform.MeshSpec{Profile: platform.ProfileAmbientL4Policy},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient"},
			values:  map[string]map[string]any{"ztunnel": {"resources.requests.cpu": "200m", "resources.requests.memory": "512Mi"}},
			objects: 1 + 2*4, // a policy per service per namespace
		},
		{
			name: "waypoint", spec: platform.MeshSpec{Profile: platform.ProfileAmbientWaypoint},
			releases: "istio-base,istiod,istio-cni,ztunnel", nsLabels: map[string]string{labelDataplane: "ambient", labelUseWaypoint: waypointName},
			values:  map[string]map[string]any{"istiod": {"global.waypoint.resources.requests.cpu": "100m"}},
			objects: 1 + 2,
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
	pl, err := p.plan(platform.MeshSpec{Profile: platform.ProfileLinkerd})
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
	pl, err := p.plan(platform.MeshSpec{Profile: platform.ProfileCilium})
	if err != nil {
		t.Fatal(err)
	}
	v := release(t, pl, "cilium").Values
	if dig(v, "encryption.type") != "wireguard" || dig(v, "authentication.mutual.spire.enabled") != true {
		t.Errorf("cilium values = %v", v)
	}
	if len(pl.Objects) != 2 || dig(pl.Objects[0].Object, "spec.ingress") == nil {
		t.Errorf("want a mutual-auth policy per namespace, got %d objects", len(pl.Objects))
	}
}

func TestUnknownProfile(t *testing.T) {
	t.Parallel()
	_, err := testPlatformFor(t, "tiered").plan(platform.MeshSpec{Profile: "consul"})
	if err == nil || !strings.Contains(err.Error(), "ambient-waypoint") {
		t.Errorf("err = %v, want one listing the known profiles", err)
	}
}

func TestCallers(t *testing.T) {
	t.Parallel()
	got := callers("ns-3", testGraph(t, "tiered"))
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
