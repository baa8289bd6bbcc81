package istiod

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/testenv"
)

// The command line the lab runs istiod with (Command), started as root,
// with istiod replaced by a program that appends to a root-owned 0644 file
// and says who it is: it runs as the control plane's user with no
// capability, in the cluster's namespace, and cannot write the file. (It
// ran as root with no capability, which could.)
func TestIntegrationLabIstiodCannotWriteRootFiles(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	dir, victim := testenv.RootVictim(t)
	closed := filepath.Join(dir, "cache")
	if err := os.Mkdir(closed, 0o700); err != nil { // as /root/.cache is to others
		t.Fatal(err)
	}
	prog := filepath.Join(closed, "pilot-discovery")
	script := "#!/bin/sh\nid -u\ngrep ^CapEff /proc/self/status\nip -o link | wc -l\necho pwned >> " + victim + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kube := filepath.Join(dir, "kube")
	if err := os.Mkdir(kube, 0o700); err != nil {
		t.Fatal(err)
	}
	ns, err := localkube.NewNetns()
	if err != nil {
		t.Fatal(err)
	}
	c := &localkube.Cluster{Dir: kube, Kubeconfig: filepath.Join(kube, "kubeconfig"), Netns: ns}
	defer ns.Close()
	// The working directory as Start leaves it.
	if err := os.Chmod(kube, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(kube, 0, localkube.UID); err != nil {
		t.Fatal(err)
	}
	d, err := New(Build{Binary: prog}, Options{Cluster: c, Dir: filepath.Join(dir, "plane"), Env: []string{"GOMAXPROCS=1"}})
	if err != nil {
		t.Fatal(err)
	}
	argv := d.Command()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if b, _ := os.ReadFile(victim); string(b) != testenv.VictimContent {
		t.Errorf("istiod's command wrote a root-owned 0644 file: %q (%s)", b, out)
	}
	if !strings.HasPrefix(string(out), "65533\nCapEff:\t0000000000000000\n1\n") {
		t.Errorf("istiod's command ran as %q (%v); want uid 65533, no capability, loopback alone", out, err)
	}
}
