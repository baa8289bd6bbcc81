package localkube

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// A process of the local control plane (etcd, the API server, the
// controller manager, kwok, the control-plane study's istiod) is started
// as StartProcess starts each, here a program that appends to a root-owned
// 0644 file and says who it is: it runs as the control plane's own user,
// with no capability, and cannot.
func TestIntegrationControlPlaneCannotWriteRootFiles(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	dir, victim := testenv.RootVictim(t)
	// The program sits in a directory only root may enter, as the cache
	// under /root does.
	closed := filepath.Join(dir, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(closed, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nid -u\ngrep ^CapEff /proc/self/status\necho pwned >> "+victim+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ns, err := NewNetns()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Netns: ns, log: slog.New(slog.DiscardHandler)}
	defer c.Stop(true)
	cmd, err := c.StartProcess("prog", prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if b, _ := os.ReadFile(victim); string(b) != testenv.VictimContent {
		t.Errorf("a control-plane process wrote a root-owned 0644 file: %q", b)
	}
	out := c.LogTail("prog", 10)
	if !strings.Contains(out, "65533\n") || !strings.Contains(out, "CapEff:\t0000000000000000") {
		t.Errorf("the process's output %q; want uid 65533 with no effective capability", out)
	}
}

// The whole local control plane, as Start brings it up: the API server
// answers, every process runs as UID with no capability, and nothing in
// its directory (keys, kubeconfig, etcd's data) is readable by others.
func TestIntegrationStartRunsAsItsOwnUser(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	err := CheckBinaries(BinDir())
	testenv.Need(t, err == nil, "the local control plane's binaries (scripts/k8s-testbin.sh): %v", err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "mb-localkube-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c, err := Start(ctx, Options{BinDir: BinDir(), Dir: dir})
	if c != nil {
		defer c.Stop(false)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.procs {
		pr := testenv.ProcPrivileges(t, p.Process.Pid)
		if pr.UID != "65533 65533 65533 65533" || pr.Effective != 0 || pr.Permitted != 0 {
			t.Errorf("%s: %+v; want uid 65533 with no capability", p.Args[0], pr)
		}
	}
	st, err := os.Stat(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o750 || st.Sys().(*syscall.Stat_t).Uid != 0 || st.Sys().(*syscall.Stat_t).Gid != UID {
		t.Errorf("%s: mode %s, owner %d:%d; want 0750 root:%d", c.Dir, st.Mode(), st.Sys().(*syscall.Stat_t).Uid, st.Sys().(*syscall.Stat_t).Gid, UID)
	}
	_ = filepath.Walk(c.Dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o007 != 0 && filepath.Dir(p) != filepath.Join(c.Dir, "stages") {
			t.Errorf("%s is open to others (mode %s)", p, fi.Mode())
		}
		return nil
	})
}
