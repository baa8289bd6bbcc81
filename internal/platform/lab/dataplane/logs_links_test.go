package dataplane

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
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
