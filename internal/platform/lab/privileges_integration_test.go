package lab

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/topology"
)

// A load generator is started as a lab container exactly as a
// measurement starts it (runGenerator), here with a program that tries to
// append to a root-owned 0644 file and says who it is. Root with no
// capability could: DAC lets a file's owner write it. The generator runs
// as an unprivileged user, so the file is unchanged.
func TestIntegrationGeneratorCannotWriteRootFiles(t *testing.T) {
	needLab(t)
	g, err := topology.Load("tiered")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := upLab(t, ctx, Options{}, g)
	dir := openTempDir(t)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "generator")
	script := "#!/bin/sh\nid -u >&2\necho pwned >> " + victim + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "logs")
	if err := os.Mkdir(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	gen := &generator{namespace: "ns-1", pod: LoadPodName, container: "probe", opts: load.Options{URL: "http://127.0.0.1:1/"}}
	_, err = p.runGenerator(ctx, p.lab, prog, filepath.Join(p.lab.StateDir(), "load"), confined.Dir{Root: dir, Name: "logs"}, gen)
	if err == nil {
		t.Fatal("the fake generator gave a result")
	}
	if b, _ := os.ReadFile(victim); string(b) != "root's\n" {
		t.Errorf("a generator wrote a root-owned 0644 file: %q", b)
	}
	b, err := os.ReadFile(filepath.Join(logDir, "load-ns-1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(b), "\n"), strconv.Itoa(AppUID)) {
		t.Errorf("the generator's log %q does not show it ran as uid %d", b, AppUID)
	}
}
