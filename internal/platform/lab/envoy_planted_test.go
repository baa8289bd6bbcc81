package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/testenv"
)

// The audit's repro: a script another user planted as DIR/.venv/bin/envoy
// ran as root when doctor was started in DIR/x/y. Envoy is never looked
// for above the working directory, so the script does not run.
func TestDoctorDoesNotRunAPlantedEnvoy(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := filepath.Join(dir, ".venv", "bin", "envoy")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\nid > "+ran+"\necho 'envoy  version: 0/1.40.0/Clean/RELEASE/BoringSSL'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(dir, "x", "y")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	t.Setenv(dataplane.EnvoyEnv, "")
	t.Setenv("PATH", t.TempDir()) // no envoy on PATH either
	f := envoyFinding(context.Background(), envoyVersionTimeout)
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("doctor ran the planted %s (finding: %s)", script, f.Line())
	}
	if f.OK {
		t.Errorf("envoy finding passed with no Envoy installed: %s", f.Line())
	}
}

// An Envoy named by MESHBENCH_ENVOY runs only when no other user could
// have changed it: a file, or a directory above it, that group or others
// may write, or a setuid or setgid file, is refused, and the file does
// not run. /tmp itself (sticky, root's) is no objection: there others
// cannot replace what they do not own.
func TestDoctorRefusesAnEnvoyOthersCanChange(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fileMode os.FileMode
		dirMode  os.FileMode
		want     string
		fix      string // in the finding's fix, where it names one
	}{
		{name: "group-writable file", fileMode: 0o775, dirMode: 0o755, want: "writable by group or others"},
		{name: "world-writable directory", fileMode: 0o755, dirMode: 0o777, want: "writable by group or others"},
		// Setuid or setgid: the kernel clears the parent-death signal when
		// exec changes credentials, and the file would override the user
		// the lab gives the proxy.
		{name: "setuid file", fileMode: 0o755 | os.ModeSetuid, dirMode: 0o755, want: "is setuid or setgid (mode ", fix: "chmod u-s,g-s"},
		{name: "setgid file", fileMode: 0o755 | os.ModeSetgid, dirMode: 0o755, want: "is setuid or setgid (mode ", fix: "chmod u-s,g-s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "opt")
			ran := filepath.Join(t.TempDir(), "ran")
			bin := filepath.Join(dir, "envoy")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, []byte("#!/bin/sh\nid > "+ran+"\necho 'envoy  version: 0/1.40.0/Clean/RELEASE/BoringSSL'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			// Modes set explicitly: the umask would narrow them.
			if err := os.Chmod(bin, tc.fileMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			t.Setenv(dataplane.EnvoyEnv, bin)
			f := envoyFinding(context.Background(), envoyVersionTimeout)
			if _, err := os.Stat(ran); err == nil {
				t.Fatalf("doctor ran %s (finding: %s)", bin, f.Line())
			}
			if f.OK || !strings.Contains(f.Detail, tc.want) || !strings.Contains(f.Fix, tc.fix) {
				t.Errorf("finding %s; want it refused saying %q, the fix naming %q", f.Line(), tc.want, tc.fix)
			}
		})
	}
}

// A file another user owns is refused however its mode reads: its owner
// could change it between the check and the run.
func TestIntegrationDoctorRefusesAnotherUsersEnvoy(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	bin := filepath.Join(dir, "envoy")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nid > "+ran+"\necho 'envoy  version: 0/1.40.0/Clean/RELEASE/BoringSSL'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(bin, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	t.Setenv(dataplane.EnvoyEnv, bin)
	f := envoyFinding(context.Background(), envoyVersionTimeout)
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("doctor ran another user's %s (finding: %s)", bin, f.Line())
	}
	if f.OK || !strings.Contains(f.Detail, "owned by uid 1000") {
		t.Errorf("finding %s; want it refused naming its owner", f.Line())
	}
}
