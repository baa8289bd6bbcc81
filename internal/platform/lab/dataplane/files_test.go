package dataplane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
)

// ClosedAbove names the nearest directory other users cannot enter, and
// nothing once every directory is open to them.
func TestClosedAbove(t *testing.T) {
	t.Parallel()
	base, err := os.MkdirTemp("", "closed-above-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	inner := filepath.Join(base, "a", "b")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		base, a    os.FileMode
		wantClosed string
	}{
		{name: "open", base: 0o755, a: 0o755},
		{name: "the base closed", base: 0o700, a: 0o755, wantClosed: base},
		{name: "the nearest closed is named", base: 0o700, a: 0o750, wantClosed: filepath.Join(base, "a")},
	} {
		if err := os.Chmod(base, tt.base); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(base, "a"), tt.a); err != nil {
			t.Fatal(err)
		}
		got, err := ClosedAbove(filepath.Join(inner, "file"))
		if err != nil || got != tt.wantClosed {
			t.Errorf("%s: ClosedAbove = %q, %v; want %q", tt.name, got, err, tt.wantClosed)
		}
	}
}

// An install under a directory the proxies' user cannot enter is refused,
// naming it, before anything runs.
func TestInstallRefusesClosedDir(t *testing.T) {
	t.Parallel()
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err := Install(context.Background(), nil, mesh.MeshSpec{Profile: "sidecar"}, Options{Dir: filepath.Join(closed, "mesh")})
	if err == nil || !strings.Contains(err.Error(), "directory "+closed+" is not traversable by the proxies' user 1337") {
		t.Fatalf("err = %v", err)
	}
}
