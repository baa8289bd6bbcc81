package dataplane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	if err := checkLoads(ctx, bin, "test", string(p.Role), p.path(configFile), 0); err != nil {
		t.Fatalf("envoy rejects %s: %v", p.Name, err)
	}
}

// TestIntegrationCheckLoadsSaysWhy checks that a configuration Envoy
// cannot load fails with the release and Envoy's reason, as a release
// older than a field meshbench writes would.
func TestIntegrationCheckLoadsSaysWhy(t *testing.T) {
	testenv.Integration(t)
	bin, err := FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	cfg := filepath.Join(t.TempDir(), "envoy.yaml")
	if err := os.WriteFile(cfg, []byte("static_resources: {listeners: [{name: l, field_from_the_future: 1}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = checkLoads(ctx, bin, "1.99.0", "sidecar", cfg, 0)
	if err == nil {
		t.Fatal("checkLoads accepted a configuration with an unknown field")
	}
	for _, want := range []string{"envoy 1.99.0", "sidecar configuration", "field_from_the_future"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
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

// Envoy the proxies' user cannot execute prints nothing: the error says
// why instead of ending in an empty reason.
func TestCheckLoadsUnreachableSaysWhy(t *testing.T) {
	testenv.NeedRoot(t) // it runs the check as the proxies' user
	dir := filepath.Join(t.TempDir(), "closed")
	bin := filepath.Join(dir, "envoy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := checkLoads(context.Background(), bin, "1.40.0", "sidecar", filepath.Join(dir, "envoy.yaml"), 1337)
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("checkLoads of an Envoy the proxies' user cannot reach: %v; want it to say permission denied", err)
	}
}
