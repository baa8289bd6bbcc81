package load

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoopWaitsBetweenInstantFailures: when every connect fails at once
// (here an IPv6 address on an IPv4 socket; in life, no descriptors left),
// the loop still goes round its wait, so it stops when told to rather than
// failing request after request in one endless call chain.
func TestLoopWaitsBetweenInstantFailures(t *testing.T) {
	t.Parallel()
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprint("hold ", hold), func(t *testing.T) {
			o := Options{URL: "http://127.0.0.1:9/", Connections: 2, Duration: time.Minute}
			if err := o.normalize(); err != nil {
				t.Fatal(err)
			}
			tg, err := parseTarget(o.URL)
			if err != nil {
				t.Fatal(err)
			}
			l, err := newLoop(&o, tg, http1Request(&o, tg), o.Connections, hold, newRecorder(newSink(false)))
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			l.sa = &unix.SockaddrInet6{Port: 9}
			var stopped atomic.Bool
			time.AfterFunc(100*time.Millisecond, func() { stopped.Store(true); l.abort() })
			start := time.Now()
			l.run(t.Context(), newSchedule(&o, 0), start, &stopped)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the loop ran %v after being stopped at 100 ms", took)
			}
			if l.rec.errors == 0 {
				t.Errorf("no failed request recorded")
			}
		})
	}
}

// TestLoopHoldingItsPStaysOutOfTheNetpoller: a loop that waits keeping
// its P must not have its epoll set watched by the runtime's, or each
// response would also wake the thread waiting there for the next timer
// (a progress line's ticker). One that parks must be watched, or it would
// never wake.
func TestLoopHoldingItsPStaysOutOfTheNetpoller(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprint("hold ", hold), func(t *testing.T) {
			o := Options{URL: "http://127.0.0.1:9/", Connections: 1, Duration: time.Second}
			if err := o.normalize(); err != nil {
				t.Fatal(err)
			}
			tg, err := parseTarget(o.URL)
			if err != nil {
				t.Fatal(err)
			}
			l, err := newLoop(&o, tg, http1Request(&o, tg), 1, hold, newRecorder(newSink(false)))
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			if watched := epollWatchers(t, l.ep); watched == hold {
				t.Errorf("hold %v: another epoll set of this process watches the loop's: %v", hold, watched)
			}
		})
	}
}

// epollWatchers says whether an epoll set of this process other than fd
// watches fd, from /proc/self/fdinfo.
func epollWatchers(t *testing.T, fd int) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, e := range entries {
		if e.Name() == fmt.Sprint(fd) {
			continue
		}
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "tfd:" && f[1] == fmt.Sprint(fd) {
				return true
			}
		}
	}
	return false
}
