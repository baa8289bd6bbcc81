package dataplane

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
	"golang.org/x/sys/unix"
)

// The proxies' user owns each proxy's directory, so the logs meshbench
// reads and truncates there are the proxies' to replace: a link planted at
// an HBONE log (to a large file of root's) is not followed, and the file
// it names keeps its contents.
func TestBoundLogsDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, make([]byte, connectLogLimit+1), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &proxy{Name: "ztunnel/app", Dir: t.TempDir()}
	if err := os.Symlink(victim, p.path(connLogFile)); err != nil {
		t.Fatal(err)
	}
	in := &Installation{o: Options{Logger: slog.New(slog.DiscardHandler)}, nodes: map[string]*proxy{"app": p}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { in.boundLogs(stop); close(done) }()
	time.Sleep(2500 * time.Millisecond) // two of its rounds
	close(stop)
	<-done
	if fi, err := os.Stat(victim); err != nil || fi.Size() != connectLogLimit+1 {
		t.Errorf("the file a planted link names: %v, %v; want it untouched (%d bytes)", fi.Size(), err, connectLogLimit+1)
	}
}

// A probe's log is read only as a plain file, and only what was added
// since it was marked, up to a bound: a link planted at it (to a file
// holding the very line the check looks for) is not followed, and a huge
// sparse file in its place is not read whole.
// Not parallel: it measures this process's allocations.
func TestWaitLineBoundedAndNoLinks(t *testing.T) {
	dir := t.TempDir()
	forged := filepath.Join(t.TempDir(), "forged")
	if err := os.WriteFile(forged, []byte("probe=p1 peer=spiffe://cluster.local/ns/ns-1/sa/caller\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.WriteFile(link, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tail := markLogs(link)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(forged, link); err != nil {
		t.Fatal(err)
	}
	relevant := func(l string) bool { return field(l, "probe") == "p1" }
	if err := tail.waitLine(context.Background(), relevant, "spiffe://cluster.local/ns/ns-1/sa/caller"); err == nil {
		t.Error("a line read through a planted link passed the identity check")
	}

	sparse := filepath.Join(dir, "sparse.log")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tail = markLogs(sparse)
	if err := os.Truncate(sparse, 256<<20); err != nil { // 256 MiB of holes
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = tail.waitLine(context.Background(), relevant, "anyone")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("reading a 256 MiB log allocated %d MiB; want it bounded", grew>>20)
	}
}

// Each thing the proxies' user could plant at a log, besides a link, is
// refused by the open both the HBONE log's bound and a probe's read go
// through: a FIFO (a read would block), a device (it would act), and a
// hard link to a large file of root's, which the bound would empty. The
// file a hard link names keeps its contents, and a probe reads nothing
// from any of them.
func TestLogsRefuseWhatIsNotAPlainFile(t *testing.T) {
	t.Parallel()
	plant := map[string]func(t *testing.T, path, victim string){
		"fifo": func(t *testing.T, path, _ string) {
			if err := unix.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"device": func(t *testing.T, path, _ string) {
			if err := unix.Mknod(path, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
				testenv.Need(t, false, "a device node (mknod needs root): %v", err)
			}
		},
		"hard link": func(t *testing.T, path, victim string) {
			if err := os.Link(victim, path); err != nil {
				testenv.Need(t, false, "a hard link between two temporary directories: %v", err)
			}
		},
	}
	for name, plant := range plant {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, make([]byte, connectLogLimit+1), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), connLogFile)
			plant(t, path, victim)
			// A FIFO with no reader cannot even be opened to write (ENXIO);
			// the others are opened and refused.
			if err := emptyPastLimit(path); err == nil || name != "fifo" && !strings.Contains(err.Error(), "refused: not a plain file of its own") {
				t.Errorf("emptyPastLimit: %v; want it refused", err)
			}
			if b := (logTail{path: 0}).read(path, make([]byte, maxLogRead)); len(b) != 0 {
				t.Errorf("a probe read %d bytes from it", len(b))
			}
			if fi, err := os.Stat(victim); err != nil || fi.Size() != connectLogLimit+1 {
				t.Errorf("the file a hard link names: %v; want it untouched", err)
			}
		})
	}
}

// A probe's poll reads at most maxLogRead of a log, whole lines only, and
// the next poll reads on from there.
func TestLogTailReadsABoundAPoll(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "probe.log")
	line := strings.Repeat("x", 99) + "\n"
	const lines = 3 * maxLogRead / 100 // 3 MiB of 100-byte lines
	if err := os.WriteFile(path, []byte(strings.Repeat(line, lines)), 0o644); err != nil {
		t.Fatal(err)
	}
	tail := logTail{path: 0}
	buf := make([]byte, maxLogRead)
	read := 0
	for poll := 1; ; poll++ {
		b := tail.read(path, buf)
		if len(b) == 0 {
			break
		}
		if len(b) > maxLogRead || len(b)%len(line) != 0 {
			t.Fatalf("poll %d read %d bytes; want whole lines, at most %d", poll, len(b), maxLogRead)
		}
		read += len(b)
		if poll > 4 {
			t.Fatalf("%d polls for a 3 MiB log", poll)
		}
	}
	if read != lines*len(line) {
		t.Errorf("the polls read %d bytes of %d", read, lines*len(line))
	}
}
