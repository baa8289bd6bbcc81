package lab

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"

	"github.com/meshbench/meshbench/internal/testenv"
)

// fakeEnvoy writes an executable script that stands for Envoy, points
// MESHBENCH_ENVOY at it and returns the file that counts its runs.
func fakeEnvoy(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	script := "#!/bin/sh\necho run >> " + runs + "\n" + body + "\n"
	bin := filepath.Join(dir, "bin", "envoy")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// As an install is: the proxies' user reaches it (t.TempDir's own
	// directory is 0700).
	for d := filepath.Dir(bin); d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(dataplane.EnvoyEnv, bin)
	return runs
}

func TestEnvoyVersion(t *testing.T) {
	tests := []struct {
		name    string
		body    string // the fake's script; "" means no Envoy at all
		want    string
		warning string
	}{
		{
			name: "release build, as the PyPI wheel prints it",
			body: `printf '\n%s  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE/BoringSSL\n' "$0"`,
			want: "1.40.0",
		},
		{
			name: "development build",
			body: `echo "envoy  version: 0123456789abcdef/1.41.0-dev/Modified/DEBUG/BoringSSL"`,
			want: "1.41.0-dev",
		},
		{name: "unexpected output", body: `echo "envoy 1.40"`, warning: "could not read the Envoy version"},
		{name: "fails", body: `echo "bad flag" >&2; exit 1`, warning: "could not read the Envoy version"},
		{name: "hangs", body: `exec sleep 30`, warning: "could not read the Envoy version"},
		{name: "missing", warning: "no Envoy found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs string
			if tt.body != "" {
				runs = fakeEnvoy(t, tt.body)
			} else {
				t.Setenv(dataplane.EnvoyEnv, filepath.Join(t.TempDir(), "no-envoy"))
			}
			var logs bytes.Buffer
			p := newPlatform(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if strings.Contains(tt.body, "sleep") {
				p.envoy.timeout = 300 * time.Millisecond
			}
			start := time.Now()
			for range 2 {
				in, err := p.Info(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if in.EnvoyVersion != tt.want {
					t.Errorf("EnvoyVersion %q, want %q", in.EnvoyVersion, tt.want)
				}
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Info took %s: the version lookup is not bounded", took)
			}
			if tt.warning == "" && logs.Len() > 0 {
				t.Errorf("unexpected log: %s", logs.String())
			}
			if tt.warning != "" && strings.Count(logs.String(), tt.warning) != 1 {
				t.Errorf("want one warning %q, got log:\n%s", tt.warning, logs.String())
			}
			if runs != "" {
				b, _ := os.ReadFile(runs)
				if n := strings.Count(string(b), "run"); n != 1 {
					t.Errorf("envoy ran %d times for two Info calls, want once (cached)", n)
				}
			}
		})
	}
}

func TestIntegrationEnvoyVersion(t *testing.T) {
	testenv.Integration(t)
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy (scripts/setup.sh installs it into .venv; MESHBENCH_ENVOY names it): %v", err)
	in, err := newPlatform(Options{}).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`).MatchString(in.EnvoyVersion) {
		t.Errorf("EnvoyVersion %q, want a version such as 1.40.0", in.EnvoyVersion)
	}
}

// TestEnvoyReleaseFinding checks that doctor fails a release a mesh names
// but this host lacks, with the command that installs it as the fix.
func TestEnvoyReleaseFinding(t *testing.T) {
	t.Chdir(t.TempDir())
	fakeEnvoy(t, `echo "envoy  version: 9e55/1.40.0/Clean/RELEASE/BoringSSL"`)
	if f := envoyReleaseFinding(context.Background(), "1.40.0"); !f.OK {
		t.Errorf("the default Envoy's own release: %+v, want OK", f)
	}
	f := envoyReleaseFinding(context.Background(), "1.38.3")
	if f.OK || f.Check != "envoy 1.38.3" || f.Fix != "scripts/setup.sh envoy 1.38.3" {
		t.Errorf("a missing release: %+v, want a failure whose fix installs it", f)
	}
}

// The proxies' user validates Envoy's configuration by Envoy's path: on a
// host whose home directories are closed (Debian 12 makes them 0700), a
// checkout there passes as root and fails at the first install. The
// doctor names the directory.
func TestEnvoyFindingClosedDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	fakeEnvoy(t, `echo "envoy  version: 9e55/1.40.0/Clean/RELEASE/BoringSSL"`)
	bin := os.Getenv(dataplane.EnvoyEnv)
	if f := envoyFinding(context.Background(), envoyVersionTimeout); !f.OK {
		t.Fatalf("an Envoy under open directories: %+v, want OK", f)
	}
	closed := filepath.Dir(filepath.Dir(bin))
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	f := envoyFinding(context.Background(), envoyVersionTimeout)
	if f.OK || !strings.Contains(f.Detail, closed) || !strings.Contains(f.Detail, "1337") || !strings.Contains(f.Fix, "chmod o+x "+closed) {
		t.Errorf("an Envoy under a closed directory: %+v, want a failure naming %s and its fix", f, closed)
	}
}

// An Envoy that has not answered `--version` within the bound is named as
// slow or hung, not as one that "does not run": under emulation or on a
// loaded host its start alone takes seconds, and the fix differs.
func TestEnvoyFindingTimeout(t *testing.T) {
	t.Chdir(t.TempDir())
	fakeEnvoy(t, `exec sleep 30`)
	start := time.Now()
	f := envoyFinding(context.Background(), 300*time.Millisecond)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("envoyFinding took %s: the version check is not bounded", took)
	}
	if f.OK || !strings.Contains(f.Detail, "did not answer --version within 300ms") || strings.Contains(f.Detail, "does not run") {
		t.Errorf("an Envoy that hangs: %+v, want a failure saying it timed out", f)
	}
	if !strings.Contains(f.Fix, "hangs") {
		t.Errorf("an Envoy that hangs: fix %q, want one for a binary that hangs or a host too slow", f.Fix)
	}
}
