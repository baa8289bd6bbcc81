package dataplane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFakeEnvoy writes a script at path that answers --version as the
// wheel's Envoy of that release does.
func writeFakeEnvoy(t *testing.T, path, release string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"envoy  version: 0ebfcfe5/" + release + "/Clean/RELEASE/BoringSSL\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestEnvoyFor(t *testing.T) {
	dir := t.TempDir()
	// The releases are installed beside meshbench, wherever it runs from.
	t.Chdir(t.TempDir())
	setInstallDir(t, dir)
	def := filepath.Join(dir, "default", "envoy")
	writeFakeEnvoy(t, def, "1.40.0")
	t.Setenv(EnvoyEnv, def)
	writeFakeEnvoy(t, filepath.Join(dir, VersionsDir, "1.38.3", "envoy", "_bin", "envoy"), "1.38.3")
	writeFakeEnvoy(t, filepath.Join(dir, VersionsDir, "1.39.0", "envoy", "_bin", "envoy"), "1.39.1")
	tests := []struct {
		name, version, wantBin, wantVersion, wantErr string
	}{
		{name: "default", wantBin: def, wantVersion: "1.40.0"},
		{name: "the default's own release", version: "1.40.0", wantBin: def, wantVersion: "1.40.0"},
		{name: "installed release", version: "1.38.3", wantBin: filepath.Join(dir, VersionsDir, "1.38.3", "envoy", "_bin", "envoy"), wantVersion: "1.38.3"},
		{name: "not installed", version: "1.36.2", wantErr: "no Envoy 1.36.2 (not installed under .venv-envoy): run scripts/setup.sh envoy 1.36.2"},
		{name: "another release in its directory", version: "1.39.0", wantErr: "is Envoy 1.39.1, not 1.39.0: run scripts/setup.sh envoy 1.39.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, got, err := EnvoyFor(context.Background(), tt.version)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bin != tt.wantBin || got.Version != tt.wantVersion {
				t.Errorf("EnvoyFor(%q) = %s, %s; want %s, %s", tt.version, bin, got.Version, tt.wantBin, tt.wantVersion)
			}
			if want := "0ebfcfe5/" + tt.wantVersion + "/Clean/RELEASE/BoringSSL"; got.Build != want {
				t.Errorf("EnvoyFor(%q)'s build is %q, want %q", tt.version, got.Build, want)
			}
		})
	}
}

// setInstallDir places meshbench's install directory at dir for a test.
func setInstallDir(t *testing.T, dir string) {
	t.Helper()
	orig := installDir
	installDir = func() string { return dir }
	t.Cleanup(func() { installDir = orig })
}

// Envoy is found where scripts/setup.sh installed it beside meshbench,
// wherever the user stands (issue 44: from /tmp, doctor said to run
// scripts/setup.sh), and never above the working directory.
func TestFindEnvoyBesideMeshbench(t *testing.T) {
	install := t.TempDir()
	writeFakeEnvoy(t, filepath.Join(install, ".venv", "bin", "envoy"), "1.40.0")
	wd := t.TempDir()
	writeFakeEnvoy(t, filepath.Join(wd, ".venv", "bin", "envoy"), "1.40.0") // planted where the user stands
	t.Chdir(wd)
	t.Setenv(EnvoyEnv, "")
	t.Setenv("PATH", t.TempDir())
	setInstallDir(t, install)
	if bin, err := FindEnvoy(); err != nil || bin != filepath.Join(install, ".venv", "bin", "envoy") {
		t.Errorf("FindEnvoy = %s, %v; want the one beside meshbench", bin, err)
	}
	setInstallDir(t, "")
	if bin, err := FindEnvoy(); err == nil {
		t.Errorf("FindEnvoy with no install found %s", bin)
	}
}
