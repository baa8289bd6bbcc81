package load

import (
	"fmt"
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
