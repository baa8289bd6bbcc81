package lab

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/topology"
)

// TestIntegrationLogsOutliveDown checks that every log a run needs is in
// its results directory after Down: each measurement's generator output,
// the log of a pod that crashed during a measurement, every pod's log, and
// whatever file a failed measurement's error names.
func TestIntegrationLogsOutliveDown(t *testing.T) {
	needLab(t)
	g, err := topology.Load("tiered")
	if err != nil {
		t.Fatal(err)
	}
	res := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := upLab(t, ctx, Options{LogDir: confined.Dir{Root: res, Name: "logs/pods"}}, g)
	var victim string
	var pid int
	for _, pod := range p.lab.Pods() {
		// The victim is an app pod: not the generators' pods, which
		// run no container until a measurement starts one.
		if pod.Name != LoadPodName && pod.Name != OutsidePodName && len(pod.Containers) > 0 && victim == "" {
			victim, pid = pod.Name, pod.Containers[0].PID
		}
	}

	// Cell A: an app container is killed while the generator runs.
	cellA := confined.Dir{Root: res, Name: "logs/cells/a_r1"}
	killed := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		killed <- syscall.Kill(pid, syscall.SIGKILL)
	}()
	_, err = p.Measure(ctx, infra.LoadSpec{Path: infra.PathService, LogDir: cellA,
		Options: load.Options{Connections: 2, Rate: 50, Duration: 3 * time.Second, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-killed; err != nil {
		t.Fatal(err)
	}

	// Cell B: the generator refuses its options and leaves no result.
	cellB := confined.Dir{Root: res, Name: "logs/cells/b_r1"}
	_, err = p.Measure(ctx, infra.LoadSpec{Path: infra.PathService, LogDir: cellB,
		Options: load.Options{Connections: 0, Rate: 50, Duration: time.Second, Timeout: 5 * time.Second}})
	if err == nil {
		t.Fatal("a generator with 0 connections measured")
	}
	named := regexp.MustCompile(`see (\S+)\)`).FindStringSubmatch(err.Error())
	if named == nil || named[1] != filepath.Join(cellB.Path(), "load-ns-1.log") {
		t.Fatalf("the error names no generator log: %v", err)
	}

	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.o.StateDir); !os.IsNotExist(err) {
		t.Errorf("state directory after Down: %v", err)
	}
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("after Down: %v", err)
		}
		return string(b)
	}
	if s := read(filepath.Join(cellA.Path(), "load-ns-1.log")); !strings.Contains(s, " load ") || !strings.Contains(s, "# exited 0") {
		t.Errorf("cell A's generator log:\n%s", s)
	}
	if s := read(filepath.Join(cellA.Path(), "ns-1_"+victim+".log")); !strings.Contains(s, "container app: exited") {
		t.Errorf("cell A's log of the killed pod %s:\n%s", victim, s)
	}
	if entries, _ := os.ReadDir(cellA.Path()); len(entries) != 2 {
		t.Errorf("cell A keeps %d logs, want the generator's and the killed pod's", len(entries))
	}
	if s := read(named[1]); !strings.Contains(s, "connections") || !strings.Contains(s, "# exited ") {
		t.Errorf("cell B's generator log does not say why it failed:\n%s", s)
	}
	for _, pod := range []string{"load", victim} {
		if s := read(filepath.Join(res, "logs", "pods", "ns-1_"+pod+".log")); !strings.Contains(s, "started, pid") {
			t.Errorf("kept log of pod %s:\n%s", pod, s)
		}
	}
	if s := read(filepath.Join(res, "logs", "pods", "ns-1_"+victim+".log")); strings.Count(s, "container app: started") != 2 {
		t.Errorf("the killed pod's kept log does not show its restart:\n%s", s)
	}
}
