package leftover

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/testenv"
)

// A record that names what is not a study's is refused, and nothing it
// names is listed.
func TestListRefusesForeignRecords(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mine := t.TempDir()
	for _, r := range []Record{
		{PID: 999999, Cgroups: []string{"/sys/fs/cgroup/memory"}},
		{PID: 999999, Cgroups: []string{"/sys/fs/cgroup/memory/../../../etc/mbcp-999999"}},
		{PID: 999999, Cgroups: []string{"/etc/mbcp-999999"}},
		{PID: 999999, Dir: mine},
		{PID: 999999, Dir: "/tmp/../etc/" + DirPrefix + "x"},
	} {
		if err := r.check(); err == nil {
			t.Errorf("record %+v passed", r)
		}
		if _, err := Register(root, r); err == nil {
			t.Errorf("record %+v registered", r)
		}
	}
	// One planted by hand is refused when read.
	if err := os.WriteFile(filepath.Join(root, "control-plane-999999.json"), []byte(`{"pid":999999,"cgroups":["/sys/fs/cgroup/memory"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := List(root)
	if err == nil || len(found) != 0 {
		t.Errorf("List: %+v, %v; want the record refused", found, err)
	}
}

// After a kill -9 of a control-plane study, its cgroups (with a process
// still in one), and the local control plane's directory with etcd's data
// and the API server's keys, are found and removed by what lab down runs;
// a study still running is left alone.
func TestIntegrationRemoveAfterKill(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	// Its cgroups, where the study makes them: below this process's own.
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var tops []string
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[1] == "memory" {
			tops = append(tops, filepath.Join("/sys/fs/cgroup/memory", f[2], CgroupName(pid)))
		}
	}
	testenv.Need(t, len(tops) == 1, "a cgroup v1 memory hierarchy (the control-plane study's)")
	for _, d := range []string{filepath.Join(tops[0], "istiod"), filepath.Join(tops[0], "rest")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = cluster.RemoveCgroupTree(tops[0]) })
	left := exec.Command("sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = left.Process.Kill(); _ = left.Wait() }()
	if err := os.WriteFile(filepath.Join(tops[0], "istiod", "cgroup.procs"), []byte(strconv.Itoa(left.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", DirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, f := range []string{"sa.key", "apiserver.key", "etcd/member/wal/0.wal"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Register(root, Record{PID: pid, Start: 1, Cgroups: tops, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	selfStart, err := hostsafe.ProcStart(self)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Register(root, Record{PID: self, Start: selfStart}); err != nil {
		t.Fatal(err)
	}

	found, err := List(root)
	if err != nil || len(found) != 1 || found[0].PID != pid || !slices.Contains(found[0].Processes, left.Process.Pid) {
		t.Fatalf("List: %+v, %v; want the killed study with its process", found, err)
	}
	removed, err := Remove(context.Background(), root, slog.New(slog.DiscardHandler))
	if err != nil || len(removed) != 1 {
		t.Fatalf("Remove: %+v, %v", removed, err)
	}
	for _, p := range []string{tops[0], dir, recordPath(root, pid)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", p, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- left.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the process left in the study's cgroup was not killed")
	}
	if _, err := os.Stat(recordPath(root, self)); err != nil {
		t.Errorf("the running study's record was removed: %v", err)
	}
}
