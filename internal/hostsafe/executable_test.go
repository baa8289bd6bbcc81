package hostsafe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/testenv"
)

func TestExecutable(t *testing.T) {
	t.Parallel()
	mk := func(t *testing.T, dirMode, fileMode os.FileMode) (dir, bin string) {
		t.Helper()
		dir = filepath.Join(t.TempDir(), "d")
		bin = filepath.Join(dir, "prog")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(bin, fileMode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, dirMode); err != nil {
			t.Fatal(err)
		}
		return dir, bin
	}
	for _, tc := range []struct {
		name              string
		dirMode, fileMode os.FileMode
		want              string // "" passes
	}{
		{name: "only the owner writes", dirMode: 0o755, fileMode: 0o755},
		{name: "group-writable file", dirMode: 0o755, fileMode: 0o775, want: "writable by group or others"},
		{name: "world-writable file", dirMode: 0o755, fileMode: 0o757, want: "writable by group or others"},
		{name: "world-writable directory", dirMode: 0o777, fileMode: 0o755, want: "writable by group or others"},
		{name: "not executable", dirMode: 0o755, fileMode: 0o644, want: "not an executable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, bin := mk(t, tc.dirMode, tc.fileMode)
			got, err := Executable(bin)
			if tc.want == "" {
				if err != nil || got != bin {
					t.Errorf("Executable = %s, %v; want %s", got, err, bin)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Executable: %v; want it refused saying %q", err, tc.want)
			}
		})
	}
	// A link is followed, and its target is what is checked and returned.
	_, bin := mk(t, 0o755, 0o755)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	if got, err := Executable(link); err != nil || got != bin {
		t.Errorf("Executable(link) = %s, %v; want its target %s", got, err, bin)
	}
	_, bad := mk(t, 0o777, 0o755)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bad, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Executable(link); err == nil {
		t.Errorf("a link to a file in a world-writable directory passed")
	}
}

// A file, a directory above it, or a link on the way to it that another
// user owns is refused whatever its mode.
func TestIntegrationExecutableOwnedByAnotherUser(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	for _, which := range []string{"file", "directory", "link"} {
		dir := filepath.Join(t.TempDir(), "d")
		bin := filepath.Join(dir, "prog")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		// The path run: the file, or a link to it in a sound directory.
		run := bin
		if which == "link" {
			run = filepath.Join(dir, "link")
			if err := os.Symlink(bin, run); err != nil {
				t.Fatal(err)
			}
		}
		target := map[string]string{"file": bin, "directory": dir, "link": run}[which]
		if err := os.Lchown(target, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if _, err := Executable(run); err == nil || !strings.Contains(err.Error(), target+" is owned by uid 1000") {
			t.Errorf("%s owned by uid 1000: %v; want it refused", which, err)
		}
	}
}

// A link that lives in a directory others may write is refused even when
// its target is sound: it could be pointed elsewhere after the check.
func TestExecutableLinkInAnOpenDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(open, "prog")
	if err := os.Symlink("../../"+filepath.Base(filepath.Dir(filepath.Dir(bin)))+"/d/prog", link); err != nil {
		t.Fatal(err)
	}
	if _, err := Executable(link); err == nil || !strings.Contains(err.Error(), open+" is writable by group or others") {
		t.Errorf("a link in a world-writable directory: %v; want it refused", err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Executable(link); err != nil || got != bin {
		t.Errorf("a relative link in a sound directory: %s, %v; want %s", got, err, bin)
	}
}
