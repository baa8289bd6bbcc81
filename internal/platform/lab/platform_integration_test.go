package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"

	"github.com/meshbench/meshbench/internal/testenv"
)

// needLab stops the test (testenv's rule) unless it can run a real lab
// with the meshbench binary (MESHBENCH_BIN, set by scripts/test.sh).
func needLab(t *testing.T) string {
	t.Helper()
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := os.Getenv("MESHBENCH_BIN")
	testenv.Need(t, bin != "", "MESHBENCH_BIN, the meshbench binary (make build; scripts/test.sh sets it)")
	return bin
}

// upLab brings a platform with o's options up on a lab of two nodes (app,
// load) of its own, with g deployed in one namespace, and takes it down
// when the test ends. The lab's state is under an openTempDir.
func upLab(t *testing.T, ctx context.Context, o Options, g *topology.Graph) *labPlatform {
	t.Helper()
	o.Prefix = testPrefix()
	o.Name = o.Prefix
	o.StateDir = filepath.Join(openTempDir(t), "state")
	p := newPlatform(o)
	t.Cleanup(func() {
		// A context of its own: the test's may have run out.
		dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
		defer dcancel()
		if err := p.Down(dctx); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	spec := infra.ClusterSpec{Nodes: []infra.NodeSpec{{Name: "app", Role: infra.NodeApp}, {Name: "load", Role: infra.NodeLoad}}}
	if err := p.Up(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: 1}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIntegrationDeployRedeployMeasure(t *testing.T) {
	needLab(t)
	g, err := topology.Load("tiered")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := upLab(t, ctx, Options{}, g)
	pids := map[string]int{}
	for _, pod := range p.lab.Pods() {
		for _, c := range pod.Containers {
			pids[pod.Key()] = c.PID
		}
	}
	if len(pids) != 4 {
		t.Fatalf("app pods: %v, want the 4 of the tiered graph", pids)
	}
	// Apps run as AppUID with no capability.
	for pod, pid := range pids {
		if x := testenv.ProcPrivileges(t, pid); x.UID != "65532 65532 65532 65532" || !x.Only() || !x.NoNewPrivs {
			t.Errorf("app %s: %+v, want user %d with no capability", pod, x, AppUID)
		}
	}

	// A replica sweep adds one pod and leaves the others running.
	if err := p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: 1, Replicas: map[string]int{"tier-2-app-a": 2}}); err != nil {
		t.Fatal(err)
	}
	for _, pod := range p.lab.Pods() {
		for _, c := range pod.Containers {
			if old, ok := pids[pod.Key()]; ok && old != c.PID {
				t.Errorf("pod %s was restarted by the redeploy", pod.Key())
			}
		}
	}
	if s, _ := p.lab.Service("ns-1", "tier-2-app-a"); len(s.Endpoints) != 2 {
		t.Errorf("tier-2-app-a endpoints %v, want 2", s.Endpoints)
	}

	m, err := p.Measure(ctx, infra.LoadSpec{Path: infra.PathService, PerNamespace: true,
		Options: load.Options{Connections: 2, Rate: 100, Duration: 2 * time.Second, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Generators) != 1 {
		t.Fatalf("%d generators, want 1", len(m.Generators))
	}
	r := m.Generators[0]
	if r.Requests < 150 || r.Errors != 0 {
		t.Errorf("generator: %d requests, %d errors; want about 200 and none", r.Requests, r.Errors)
	}
	// Every app replica's answers are counted: the entry answered each
	// request of the run (warm-up none), tier-2-app-a's two replicas shared
	// theirs.
	byPod := map[string]int64{}
	for _, rr := range m.Replicas {
		byPod[rr.Pod] = rr.Requests
	}
	if len(m.Replicas) != 5 || byPod["tier-1-app-a-0"] < r.Requests {
		t.Errorf("replica counts %+v; want 5 pods, the entry's at least %d", m.Replicas, r.Requests)
	}
	roles := map[metrics.Role]int{}
	for _, s := range m.Resources {
		roles[s.Component.Role]++
		for _, x := range s.Samples {
			if x.Time.Before(m.Start) || x.Time.After(m.End.Add(time.Second)) {
				t.Errorf("%s sample at %s outside the window %s..%s", s.Component.Pod, x.Time, m.Start, m.End)
			}
		}
	}
	if roles[metrics.RoleApp] != 5 || roles[metrics.RoleLoad] != 1 {
		t.Errorf("series by role %v, want 5 app and 1 load", roles)
	}
	var appCPU float64
	for _, s := range m.Resources {
		if s.Component.Role == metrics.RoleApp {
			appCPU += s.MeanCPU()
		}
	}
	if appCPU <= 0 {
		t.Error("the app used no CPU under load")
	}
}
