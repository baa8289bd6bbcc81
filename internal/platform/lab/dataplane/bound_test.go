package dataplane

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An HBONE log past connectLogLimit is emptied within a couple of seconds;
// one under it is left alone.
func TestBoundLogs(t *testing.T) {
	t.Parallel()
	big, small := &proxy{Name: "ztunnel/app", Dir: t.TempDir()}, &proxy{Name: "waypoint/ns-1/waypoint-0", Dir: t.TempDir()}
	if err := os.WriteFile(big.path(connLogFile), make([]byte, connectLogLimit+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small.path(connLogFile), []byte("one line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := &Installation{o: Options{Logger: slog.New(slog.DiscardHandler)},
		nodes: map[string]*proxy{"app": big}, wpProxies: map[string]*proxy{"ns-1/waypoint-0": small}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { in.boundLogs(stop); close(done) }()
	defer func() { close(stop); <-done }()
	size := func(p *proxy) int64 {
		fi, err := os.Stat(filepath.Join(p.Dir, connLogFile))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	deadline := time.Now().Add(5 * time.Second)
	for size(big) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a log of %d bytes, over the limit of %d, was not emptied", size(big), connectLogLimit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := size(small); s != int64(len("one line\n")) {
		t.Errorf("a log under the limit changed to %d bytes", s)
	}
}
