package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func TestGeneratorLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		writes  int // writes of 64 KiB
		code    int
		want    []string
		notWant []string
	}{
		{name: "short", writes: 1, code: 0, want: []string{"# exited 0\n"}, notWant: []string{"left out"}},
		{name: "over the limit", writes: 20, code: 2, want: []string{"# 262144 more bytes left out\n", "# exited 2\n"}},
		{name: "did not end", writes: 1, code: -1, notWant: []string{"exited"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := openGeneratorLog(confined.Dir{Root: t.TempDir(), Name: "logs"}, "ns-1", []string{"/bin/meshbench", "load", "http://10.96.0.1:8080/"})
			if err != nil {
				t.Fatal(err)
			}
			chunk := bytes.Repeat([]byte("q"), 64<<10)
			for range tt.writes {
				if n, err := g.Write(chunk); n != len(chunk) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if err := g.close(tt.code); err != nil {
				t.Fatal(err)
			}
			if n, err := g.Write(chunk); n != len(chunk) || err != nil {
				t.Errorf("Write after close: %d, %v; want it dropped quietly", n, err)
			}
			b, err := os.ReadFile(g.path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if !strings.HasSuffix(g.path, "/load-ns-1.log") || !strings.Contains(strings.SplitN(s, "\n", 2)[0], "/bin/meshbench load http://10.96.0.1:8080/") {
				t.Errorf("%s starts %.100q, want the command line", g.path, s)
			}
			if kept := strings.Count(s, "q"); kept != min(tt.writes*len(chunk), generatorLogLimit) {
				t.Errorf("kept %d bytes of output", kept)
			}
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("log lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(s, w) {
					t.Errorf("log has %q", w)
				}
			}
		})
	}
}

func TestFaultsSince(t *testing.T) {
	t.Parallel()
	pod := func(name string, cs ...cluster.Container) cluster.Pod {
		return cluster.Pod{Namespace: "ns-1", Name: name, Containers: cs}
	}
	before := faultCounts([]cluster.Pod{
		pod("front-0", cluster.Container{Name: "app", Role: metrics.RoleApp}, cluster.Container{Name: "istio-proxy", Role: metrics.RoleSidecar, Restarts: 1}),
		pod("back-0", cluster.Container{Name: "app", Role: metrics.RoleApp}),
	})
	after := []cluster.Pod{
		pod("front-0", cluster.Container{Name: "app", Role: metrics.RoleApp}, cluster.Container{Name: "istio-proxy", Role: metrics.RoleSidecar, Restarts: 2}),
		pod("back-0", cluster.Container{Name: "app", Role: metrics.RoleApp, Exited: true, ExitCode: 1}),
		pod("load", cluster.Container{Name: "load-1", Role: metrics.RoleLoad, Exited: true, ExitCode: 3}),
	}
	got := faultsSince(after, before)
	want := []string{
		"proxy restarted: ns-1/front-0/istio-proxy (restarts and failed exits: 1 before the measurement, 2 after)",
		"container exited 1: ns-1/back-0/app (restarts and failed exits: 0 before the measurement, 1 after)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("faults:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if f := faultsSince(after, faultCounts(after)); f != nil {
		t.Errorf("no change, faults %v", f)
	}
}

func TestStateDiskFinding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := stateDiskFinding(filepath.Join(dir, "not-yet"), MinFreeState)
	if f.Check != "state-disk" || !strings.Contains(f.Detail, "MiB free under "+dir) {
		t.Errorf("finding %+v", f)
	}
	if !f.OK && !strings.Contains(f.Fix, "free space under") {
		t.Errorf("a failed finding without the fix: %+v", f)
	}
}

func TestProxyUIDFinding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	proc := filepath.Join(dir, "proc")
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(passwd, "root:x:0:0::/root:/bin/sh\n")
	write(filepath.Join(proc, "1", "status"), "Name:\tinit\nUid:\t0\t0\t0\t0\n")
	if f := uidFinding(passwd, proc, proxyUser); !f.OK || !f.Advisory {
		t.Errorf("free UID: %+v", f)
	}
	write(passwd, "root:x:0:0::/root:/bin/sh\nistio:x:1337:1337::/:/bin/false\n")
	write(filepath.Join(proc, "42", "status"), "Name:\tenvoy\nUid:\t1337\t1337\t1337\t1337\n")
	// A taken UID is a warning with its fix: advisory, so the preflight
	// lets the run go on.
	taken := func(f platform.Finding, line string) {
		t.Helper()
		if f.OK || !f.Advisory || f.Fix == "" || !strings.HasPrefix(f.Line(), line+"; fix: stop what runs as that user") {
			t.Errorf("taken UID: %+v; want an advisory finding %q with the fix", f, line)
		}
		if err := platform.Problems([]platform.Finding{f}); err != nil {
			t.Errorf("the preflight refuses a run for %s: %v", f.Check, err)
		}
	}
	taken(uidFinding(passwd, proc, proxyUser), "proxy-uid: UID 1337, which the proxies run as, is user istio, running processes 42")
	if f := uidFinding(passwd, proc, appUser); !f.OK || !strings.Contains(f.Detail, "UID 65532 (the apps and load generators' user) is free") {
		t.Errorf("the apps' UID: %+v", f)
	}
	write(filepath.Join(proc, "43", "status"), "Name:\tsleep\nUid:\t65532\t65532\t65532\t65532\n")
	taken(uidFinding(passwd, proc, appUser), "app-uid: UID 65532, which the apps and load generators run as, runs processes 43")
	if f := uidFinding(passwd, proc, controlPlaneUser); !f.OK || !strings.Contains(f.Detail, "UID 65533 (the control-plane processes' user) is free") {
		t.Errorf("the control plane's UID: %+v", f)
	}
}

// With control_plane istiod the local API server's etcd keeps its data in
// the lab's state directory; doctor and the preflight ask for room for
// all it may take there (its quota and write-ahead logs) beside the lab's
// own, where they asked for 128 MiB while etcd's quota was 8 GiB.
func TestIstiodStateFitsTheCheck(t *testing.T) {
	t.Parallel()
	plain := platform.Needs{Profiles: []string{"sidecar"}}
	if got := stateNeed(plain); got != MinFreeState {
		t.Errorf("a study without istiod asks for %d MiB, want %d", got>>20, MinFreeState>>20)
	}
	withIstiod := platform.Needs{Profiles: []string{"sidecar"}, Istiod: true}
	want := uint64(MinFreeState) + uint64(localkube.EtcdDiskBound(dataplane.IstiodEtcdQuota))
	if got := stateNeed(withIstiod); got < want {
		t.Errorf("a study with istiod asks for %d MiB; its etcd alone may take %d MiB", got>>20, (want-MinFreeState)>>20)
	}
}

// TestGeneratorLogRefusesLinkSwappedIn: a measurement's log directory in
// a results directory has a directory on its way swapped for a link, as
// someone sharing the results could mid-run: the log is refused, and
// nothing is written where the link points.
func TestGeneratorLogRefusesLinkSwappedIn(t *testing.T) {
	t.Parallel()
	for _, swapped := range []string{"logs", "logs/cells", "logs/cells/c1"} {
		t.Run(swapped, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			victimDir := resultstest.SwapForLink(t, root, "logs/cells/c1", swapped)
			g, err := openGeneratorLog(confined.Dir{Root: root, Name: "logs/cells/c1"}, "ns-1", []string{"/bin/meshbench", "load"})
			if err == nil {
				g.close(0)
				t.Error("the generator's log was opened through the link")
			} else if !strings.Contains(err.Error(), "refused: a symbolic link") {
				t.Errorf("openGeneratorLog: %v, want the link refused", err)
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
	}
}
