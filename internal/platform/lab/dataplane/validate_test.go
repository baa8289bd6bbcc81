package dataplane

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// validateConfig writes a proxy's files and has Envoy check them.
func validateConfig(t *testing.T, ca *CA, p *proxy) {
	t.Helper()
	if _, err := writeProxy(p, ca); err != nil {
		t.Fatal(err)
	}
	bin, err := FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", p.path(configFile), "-l", "error").CombinedOutput()
	if err != nil {
		t.Fatalf("envoy rejects %s: %v\n%s", p.Name, err, out)
	}
}

func TestIntegrationEnvoyAcceptsSidecar(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	inv := fixture()
	v := newView(inv)
	for _, l7 := range []bool{false, true} {
		// A served pod and a load generator (no inbound ports).
		for _, pod := range []string{"tier-2-app-a-0", "loadgen-0"} {
			p := buildSidecar(v, podNamed(&inv, pod), Settings{Workers: 2}, t.TempDir(), l7)
			validateConfig(t, ca, p)
		}
	}
}

func TestIntegrationEnvoyAcceptsNodeProxy(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	inv := fixture()
	v := newView(inv)
	for _, l4 := range []bool{false, true} {
		// The app node, and the load node whose only pod serves nothing.
		for i := range inv.Nodes[:2] {
			p := buildNodeProxy(v, &inv.Nodes[i], Settings{Workers: 2}, t.TempDir(), nil, l4)
			validateConfig(t, ca, p)
		}
	}
}

func TestIntegrationEnvoyAcceptsWaypointAndIngress(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	inv := fixture()
	v := newView(inv)
	for _, l7 := range []bool{false, true} {
		validateConfig(t, ca, buildWaypoint(v, "ns-1", "waypoint-0", Settings{Workers: 2}, t.TempDir(), l7))
	}
	for _, mode := range []upstreamMode{plainUpstream, mtlsUpstream, hboneUpstream} {
		validateConfig(t, ca, buildIngress(v, &inv.Nodes[2], Settings{Workers: 2}, t.TempDir(), mode))
	}
}
