package istiod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	t.Parallel()
	files := map[string]os.FileMode{"bin/pilot-discovery": 0o755, "crds.yaml": 0o644, "gateway-crds.yaml": 0o644, "version": 0o644}
	for _, tc := range []struct {
		name    string
		missing string
		mode    os.FileMode // of the binary, when not 0
	}{
		{name: "complete"},
		{name: "no binary", missing: "bin/pilot-discovery"},
		{name: "binary not executable", mode: 0o644},
		// Run as root's child: one another user could replace is refused.
		{name: "binary others can write", mode: 0o777},
		{name: "no Istio CRDs", missing: "crds.yaml"},
		{name: "no Gateway API CRDs", missing: "gateway-crds.yaml"},
		{name: "no version", missing: "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for f, mode := range files {
				if f == tc.missing {
					continue
				}
				if f == "bin/pilot-discovery" && tc.mode != 0 {
					mode = tc.mode
				}
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("v0.0.0-test\n"), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, mode); err != nil { // the umask narrows WriteFile's mode
					t.Fatal(err)
				}
			}
			b, err := Find(dir)
			if tc.missing == "" && tc.mode == 0 {
				if err != nil || b.Version != "v0.0.0-test" || b.GatewayCRDs != filepath.Join(dir, "gateway-crds.yaml") {
					t.Fatalf("Find = %+v, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "scripts/istiod-build.sh") {
				t.Fatalf("Find with %s missing: err = %v, want one naming the build script", tc.name, err)
			}
		})
	}
}
