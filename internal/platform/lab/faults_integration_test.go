package lab

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/testenv"
	"github.com/meshbench/meshbench/internal/topology"
)

// TestIntegrationEnvoyKilledMidCell kills a sidecar's Envoy while the
// generator runs: the measurement names the restart as a fault, so that
// its cell fails with "proxy restarted". The next measurement, on the
// restarted proxy, has none: its re-verification (proxies ready,
// plaintext refused, identities carried) passes.
func TestIntegrationEnvoyKilledMidCell(t *testing.T) {
	needLab(t)
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	g, err := topology.Load("tiered")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := upLab(t, ctx, Options{}, g)
	if _, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: "sidecar"}); err != nil {
		t.Fatal(err)
	}
	var victim string
	var pid int
	for _, pod := range p.lab.Pods() {
		for _, c := range pod.Containers {
			if c.Role == metrics.RoleSidecar && pod.Name != LoadPodName && victim == "" {
				victim, pid = pod.Key()+"/"+c.Name, c.PID
			}
		}
	}
	if pid == 0 {
		t.Fatal("no app pod's sidecar runs")
	}
	opts := load.Options{Connections: 2, Rate: 50, Duration: 3 * time.Second, Timeout: 5 * time.Second}
	killed := make(chan error, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		killed <- syscall.Kill(pid, syscall.SIGKILL)
	}()
	m, err := p.Measure(ctx, infra.LoadSpec{Path: infra.PathService, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) == 0 || !strings.HasPrefix(m.Faults[0], "proxy restarted: "+victim+" ") {
		t.Fatalf("faults %q; want %s's restart", m.Faults, victim)
	}
	t.Logf("faults: %q", m.Faults)

	start := time.Now()
	m, err = p.Measure(ctx, infra.LoadSpec{Path: infra.PathService, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != 0 {
		t.Errorf("a measurement with no kill: faults %q", m.Faults)
	}
	t.Logf("a 3 s measurement with its re-verification took %s", time.Since(start).Round(10*time.Millisecond))
}
