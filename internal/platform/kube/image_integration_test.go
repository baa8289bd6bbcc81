package kube_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/meshbench/meshbench/internal/cli"
	"github.com/meshbench/meshbench/internal/platform/kube"
)

// TestIntegrationImagePushReferenced runs `meshbench image push` as a user
// does, to a registry on loopback and as a tarball, and then a platform
// with the printed reference: every pod meshbench makes on the test
// cluster (app pods, a load Job's) names that reference by digest, the
// registry serves it, and the tarball loads with go-containerregistry
// holding the same image. kwok pulls nothing and runs no container, so
// that the image runs is shown by no test here.
func TestIntegrationImagePushReferenced(t *testing.T) {
	c := kube.NeedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := staticBinary(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	tag := strings.TrimPrefix(srv.URL, "http://") + "/you/meshbench:it"

	meshbench := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Main(ctx, cli.Streams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, args); code != 0 {
			t.Fatalf("meshbench %s exited %d:\n%s", strings.Join(args, " "), code, stderr.String())
		}
		return strings.TrimSpace(stdout.String())
	}
	ref := meshbench("image", "push", tag, "--binary", bin)
	digest, err := name.NewDigest(ref)
	if err != nil || digest.Context().String() != strings.TrimSuffix(tag, ":it") {
		t.Fatalf("image push printed %q (%v), want %s's repository by digest", ref, err, tag)
	}
	pulled, err := remote.Image(digest)
	if err != nil {
		t.Fatalf("the registry does not serve %s: %v", ref, err)
	}

	tarPath := filepath.Join(t.TempDir(), "meshbench.tar")
	meshbench("image", "push", tag, "--binary", bin, "--tarball", tarPath)
	loaded, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatalf("the tarball does not load: %v", err)
	}
	// The tarball's manifest is Docker's, so compare what the image is:
	// its config (entrypoint, user) and its one layer.
	pc, err := pulled.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	lc, err := loaded.ConfigName()
	if err != nil || lc != pc {
		t.Errorf("config: pushed %s, tarball %s (%v)", pc, lc, err)
	}
	pl, err := pulled.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ll, err := loaded.Layers()
	if err != nil || len(pl) != 1 || len(ll) != 1 {
		t.Fatalf("layers: pushed %d, tarball %d (%v)", len(pl), len(ll), err)
	}
	pd, err := pl[0].DiffID()
	if err != nil {
		t.Fatal(err)
	}
	if ld, err := ll[0].DiffID(); err != nil || ld != pd {
		t.Errorf("layer: pushed %s, tarball %s (%v)", pd, ld, err)
	}

	images := kube.PodImages(t, c, ref)
	if len(images) < 5 {
		t.Fatalf("pods %v: want the workload's and the Job's", images)
	}
	for pod, imgs := range images {
		if !slices.Contains(imgs, ref) {
			t.Errorf("pod %s runs %v, none of them the pushed %s", pod, imgs, ref)
		}
	}
}

// staticBinary builds a small static Linux program to put in the image,
// as meshbench's release build is static; it needs no network.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "bin", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bin")
}
