package confined

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRefusesLinks plants, in a directory, each thing a hostile results
// directory could hold, and checks that every way of writing there
// refuses it and leaves the file outside unchanged: with openat2, and with
// the fallback for kernels without it. Not parallel: it swaps openat2.
func TestRefusesLinks(t *testing.T) {
	t.Run("openat2", testRefusesLinks)
	t.Run("O_NOFOLLOW", func(t *testing.T) {
		openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
		t.Cleanup(func() { openat2 = unix.Openat2 })
		testRefusesLinks(t)
	})
}

func testRefusesLinks(t *testing.T) {
	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "victim")
	const before = "precious\n"
	plant := map[string]func(t *testing.T, root string){
		"file link": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
			must(t, os.Symlink(victim, filepath.Join(root, "logs", "run.log")))
		},
		"directory link": func(t *testing.T, root string) {
			must(t, os.Symlink(victimDir, filepath.Join(root, "logs")))
		},
		"hard link": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
			if err := os.Link(victim, filepath.Join(root, "logs", "run.log")); err != nil {
				t.Skipf("no hard link across these directories: %v", err)
			}
		},
		"fifo": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
			must(t, syscall.Mkfifo(filepath.Join(root, "logs", "run.log"), 0o644))
		},
	}
	for name, plant := range plant {
		t.Run(name, func(t *testing.T) {
			must(t, os.WriteFile(victim, []byte(before), 0o644))
			root := t.TempDir()
			plant(t, root)
			for _, flag := range []int{os.O_APPEND, os.O_TRUNC} {
				f, err := OpenFile(root, "logs/run.log", os.O_CREATE|os.O_WRONLY|flag, 0o644)
				if err == nil {
					f.WriteString("written through\n")
					f.Close()
					t.Errorf("OpenFile(flag %#x) opened it", flag)
				} else if !strings.Contains(err.Error(), "refused") && name != "directory link" {
					t.Errorf("OpenFile: %v, want a refusal", err)
				}
			}
			if name != "file link" && name != "fifo" && name != "hard link" {
				// A link at the file itself is replaced by an atomic write;
				// a link on the way is refused.
				if err := WriteFile(root, "logs/run.log", []byte("x")); err == nil {
					t.Error("WriteFile wrote through a directory link")
				}
				if err := Mkdir(root, "logs/cells"); err == nil {
					t.Error("Mkdir made a directory through a link")
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != before {
				t.Fatalf("the file outside is now %q", b)
			}
			if _, err := os.Stat(filepath.Join(victimDir, "cells")); err == nil {
				t.Fatal("a directory was made outside")
			}
		})
	}
}

// TestWriteFileReplacesLink: an atomic write renames over a link at its
// name, so the link's target is untouched.
func TestWriteFileReplacesLink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("precious"), 0o644))
	root := t.TempDir()
	must(t, os.Symlink(victim, filepath.Join(root, "study.json")))
	must(t, WriteFile(root, "study.json", []byte("{}")))
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("victim = %q", b)
	}
	st, err := os.Lstat(filepath.Join(root, "study.json"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("study.json: %v, %v", st, err)
	}
	if _, err := ReadFile(root, "study.json"); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesNamesOutside(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"../x", "/etc/x", "a/../../x", "."} {
		if err := WriteFile(root, name, nil); err == nil {
			t.Errorf("WriteFile(%q) wrote", name)
		}
	}
}

func TestHookStopsAWrite(t *testing.T) {
	root := t.TempDir()
	stop := errors.New("killed")
	Hook = func(step string) error {
		if step == "rename a/b.json" {
			return stop
		}
		return nil
	}
	t.Cleanup(func() { Hook = nil })
	if err := WriteFile(root, "a/b.json", []byte("{}")); !errors.Is(err, stop) {
		t.Fatalf("WriteFile = %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "a"))
	if len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A results directory may come from someone else: a file larger than
// MaxRead is refused before it is read, not read into memory.
func TestReadFileRefusesAHugeFile(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "cell.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size costs no disk.
	if err := f.Truncate(MaxRead + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := ReadFile(root, "cell.json")
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Size != MaxRead+1 {
		t.Fatalf("ReadFile of a %d-byte file: %d bytes, err %v; want a TooLargeError", MaxRead+1, len(b), err)
	}
	if !strings.Contains(err.Error(), "more than the 256 MiB") {
		t.Errorf("the refusal does not say the limit: %v", err)
	}
}
