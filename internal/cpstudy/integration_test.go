package cpstudy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/testenv"
	"github.com/meshbench/meshbench/internal/xdsload"
)

// TestIntegrationControlPlaneStudy runs the study at its smallest scale,
// every mode (waypoints too), against real istiod and a real API server,
// and checks that every proxy got configuration and every change reached
// every proxy it concerns; the run is stopped after its first point and
// resumed.
func TestIntegrationControlPlaneStudy(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	c := DefaultConfig()
	k8sErr := localkube.CheckBinaries(c.K8sBinDir)
	testenv.Need(t, k8sErr == nil, "%v", k8sErr)
	_, istiodErr := istiod.Find(c.IstiodDir)
	testenv.Need(t, istiodErr == nil, "%v", istiodErr)

	c.Scales = []int{100}
	c.Modes = Modes
	c.Changes = 8
	c.Idle = 2 * time.Second
	c.SyncTimeout = 3 * time.Minute
	c.Dir = t.TempDir()
	c.Keep = os.Getenv("MESHBENCH_KUBE_IT_KEEP") != ""
	if testing.Verbose() {
		c.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	// The run is stopped once its first point is on disk, as a kill or a
	// Ctrl-C would stop it, and then resumed.
	stopped, stop := context.WithCancel(ctx)
	go func() {
		for stopped.Err() == nil {
			if r, err := ReadResults(c.Dir); err == nil && len(r.Points) > 0 {
				stop()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	if _, err := Run(stopped, c); err == nil {
		t.Fatal("the run completed although it was stopped after its first point")
	}
	stop()
	partial, err := ReadResults(c.Dir)
	if err != nil {
		t.Fatalf("a stopped run left no readable raw data: %v", err)
	}
	if len(partial.Points) == 0 || len(partial.Points) >= len(Modes) || !partial.Finished.IsZero() {
		t.Fatalf("the stopped run left %d points (finished %v), want some but not all", len(partial.Points), partial.Finished)
	}
	// The resuming command names only the directory: the scale, modes
	// and phases are the run's own.
	rc := DefaultConfig()
	rc.Dir, rc.Resume, rc.Keep, rc.Log = c.Dir, true, c.Keep, c.Log
	res, err := Run(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	if first := res.Points[0]; first.Mode != partial.Points[0].Mode || first.InitialSync != partial.Points[0].InitialSync {
		t.Errorf("the resumed run measured its first point again: %s %.3fs, was %s %.3fs", first.Mode, first.InitialSync, partial.Points[0].Mode, partial.Points[0].InitialSync)
	}
	if !res.Started.Equal(partial.Started) || res.Finished.IsZero() {
		t.Errorf("resumed results started %v (was %v), finished %v", res.Started, partial.Started, res.Finished)
	}
	if len(res.Points) != len(Modes) {
		t.Fatalf("%d points after resuming, want one per mode (%d)", len(res.Points), len(Modes))
	}
	total := map[Mode]int64{}
	for _, p := range res.Points {
		want := p.Pods
		switch p.Mode {
		case Ambient:
			want = p.Nodes
		case AmbientWaypoint:
			want = p.Nodes + p.Namespaces
		}
		if p.Proxies != want || len(p.ConfigBytes) != want {
			t.Errorf("%s: %d proxies with %d byte counts, want %d", p.Mode, p.Proxies, len(p.ConfigBytes), want)
		}
		for i, b := range p.ConfigBytes {
			if b <= 0 {
				t.Errorf("%s: proxy %d received no configuration", p.Mode, i)
				break
			}
		}
		for _, b := range p.ConfigBytes {
			total[p.Mode] += b
		}
		kinds := map[string]bool{}
		for _, ch := range p.Changes {
			kinds[ch.Kind] = true
			if ch.Affected == 0 || ch.Converged == nil {
				t.Errorf("%s: change %d (%s %s in %s): %d of %d affected proxies ACKed it", p.Mode, ch.Seq, ch.Kind, ch.Object, ch.Namespace, ch.Acked, ch.Affected)
			}
		}
		if len(kinds) != len(changeCycle) {
			t.Errorf("%s: change kinds %v, want all of %v", p.Mode, kinds, changeCycle)
		}
		var churnCPU float64
		for _, s := range p.Samples {
			if s.Phase == "churn" {
				churnCPU += s.CPUCores
			}
			if s.WorkingSet <= 0 {
				t.Errorf("%s: a sample at %.1fs has no working set", p.Mode, s.T)
				break
			}
		}
		if churnCPU <= 0 {
			t.Errorf("%s: istiod used no CPU while the churn ran, by its cgroup", p.Mode)
		}
		if p.IstiodMetrics["pilot_xds_push_time"].Count == 0 {
			t.Errorf("%s: istiod reports no pushes (pilot_xds_push_time)", p.Mode)
		}
		if p.RestartSync <= 0 {
			t.Errorf("%s: no push after restart recorded", p.Mode)
		}
		if p.Mode != Ambient && p.BytesByType[xdsload.TypeEndpoint] == 0 {
			t.Errorf("%s: sidecars or waypoints received no endpoints", p.Mode)
		}
		if p.Mode.ambient() && p.BytesByType[xdsload.TypeAddress] == 0 {
			t.Errorf("%s: node proxies received no workload addresses", p.Mode)
		}
	}
	// The last tier's Sidecar shows it its own namespace only, so scoping
	// must shrink what the sidecars receive in all.
	if !(total[SidecarScoped] < total[Sidecar]) {
		t.Errorf("config bytes in all: sidecar-scoped %d, sidecar %d; scoping should shrink them", total[SidecarScoped], total[Sidecar])
	}
	report, err := os.ReadFile(filepath.Join(c.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Modes {
		if !strings.Contains(string(report), "| "+string(m)+" | 100 |") {
			t.Errorf("report.md has no row for %s at 100 pods", m)
		}
	}
}
