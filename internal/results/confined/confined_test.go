package confined

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestRefusesLinks plants, in a directory, each thing a hostile results
// directory could hold (a link to a file or a directory, a hard link, a
// FIFO, a device), and checks that every way of writing there, and
// reading but through a hard link, refuses it and leaves the file outside
// unchanged: with openat2, and with the fallback for kernels without it.
// Not parallel: it swaps openat2.
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
				testenv.Need(t, false, "a hard link between two temporary directories: %v", err)
			}
		},
		"fifo": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
			must(t, syscall.Mkfifo(filepath.Join(root, "logs", "run.log"), 0o644))
		},
		// A character device as /dev/null is (1, 3): opening it succeeds,
		// and writing to it would act on the device, not a file.
		"device": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
			if err := unix.Mknod(filepath.Join(root, "logs", "run.log"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
				testenv.Need(t, false, "a device node (mknod needs root): %v", err)
			}
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
			// A reader refuses what is not a regular file reached without
			// a link; a hard link is read as the file it is.
			if name != "hard link" {
				if b, err := ReadFile(root, "logs/run.log", 1<<20); err == nil || !strings.Contains(err.Error(), "refused") {
					t.Errorf("ReadFile: %q, %v; want a refusal", b, err)
				}
			}
			if name == "directory link" {
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
	if _, err := ReadFile(root, "study.json", 1<<10); err != nil {
		t.Fatal(err)
	}
}

// TestWriteFileIgnoresPlantedTempNames plants, where a write's temporary
// files would be named were the names predictable (the process ID and a
// count), links to a file outside: the writes go on, and the file outside
// is unchanged.
func TestWriteFileIgnoresPlantedTempNames(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("precious"), 0o644))
	root := t.TempDir()
	for i := 1; i <= 100; i++ {
		must(t, os.Symlink(victim, filepath.Join(root, fmt.Sprintf(".study.json.tmp-%d-%d", os.Getpid(), i))))
	}
	for range 20 {
		if err := WriteFile(root, "study.json", []byte("{}")); err != nil {
			t.Fatalf("WriteFile beside planted names: %v", err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("victim = %q", b)
	}
	if b, _ := ReadFile(root, "study.json", 1<<10); string(b) != "{}" {
		t.Fatalf("study.json = %q", b)
	}
}

// TestReadFileRefusesLarge: a sparse file of 10 GB, which costs its maker
// nothing, is refused before any of it is read; a file within the limit
// is read whole.
func TestReadFileRefusesLarge(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "cell.json"))
	must(t, err)
	must(t, f.Truncate(10<<30))
	must(t, f.Close())
	start := time.Now()
	_, err = ReadFile(root, "cell.json", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 10<<30 || !strings.Contains(err.Error(), "refused: 10737418240 bytes, more than the 1048576 bytes") {
		t.Fatalf("ReadFile: %v, want the size refused", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("refusing took %s: the file was read", took)
	}
	must(t, os.WriteFile(filepath.Join(root, "small.json"), make([]byte, 1<<20), 0o644))
	if b, err := ReadFile(root, "small.json", 1<<20); err != nil || len(b) != 1<<20 {
		t.Fatalf("ReadFile at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := Open(root, "../x"); err == nil {
		t.Error("Open read outside the root")
	}
}

// TestDirRefusesLinkSwappedIn makes a measurement's log directory, then
// swaps a directory on its way for a link to one outside, as someone
// sharing the results directory could mid-run: every write through the
// Dir is refused, and nothing is made outside.
func TestDirRefusesLinkSwappedIn(t *testing.T) {
	for _, swapped := range []string{"logs", "logs/cells", "logs/cells/c1"} {
		t.Run(swapped, func(t *testing.T) {
			root, victimDir := t.TempDir(), t.TempDir()
			d := Dir{Root: root, Name: "logs/cells/c1"}
			must(t, d.Mkdir())
			must(t, os.RemoveAll(filepath.Join(root, swapped)))
			must(t, os.Symlink(victimDir, filepath.Join(root, swapped)))
			if f, err := d.OpenFile("load.log", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
				f.Close()
				t.Error("OpenFile wrote through the link")
			} else if !strings.Contains(err.Error(), "refused: a symbolic link") {
				t.Errorf("OpenFile: %v, want the link refused", err)
			}
			if err := d.WriteFile("job.log", []byte("x")); err == nil {
				t.Error("WriteFile wrote through the link")
			}
			if err := d.Mkdir(); err == nil {
				t.Error("Mkdir made a directory through the link")
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
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
