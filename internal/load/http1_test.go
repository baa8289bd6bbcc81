package load

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// cannedServer answers every request it reads on a connection with resp,
// until the client goes away, or until it answered closeAfter requests
// when that is not 0: then it closes the connection without a word, a
// millisecond later, when the client has sent its next request. It
// returns the URL and the count of connections accepted.
func cannedServer(t *testing.T, resp string, closeAfter int) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				out := []byte(resp)
				for n := 1; ; n++ {
					// Requests carry no body: read up to the blank line,
					// without allocating, so as not to count in the
					// client's allocations.
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) == 2 {
							break
						}
					}
					if _, err := c.Write(out); err != nil {
						return
					}
					if n == closeAfter {
						time.Sleep(time.Millisecond)
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/", &conns
}

// TestLoopAllocatesNothingPerRequest: a run of many more requests makes
// no more allocations, in the client and the canned server together.
func TestLoopAllocatesNothingPerRequest(t *testing.T) {
	testenv.SkipUnderRace(t, "counts allocations, and the race detector allocates")
	url, _ := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0)
	mallocs := func(n int64) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := run(t, Options{URL: url, Connections: 2, Requests: n})
		runtime.ReadMemStats(&after)
		if res.StatusCodes[200] != n {
			t.Fatalf("status codes %v, want %d × 200", res.StatusCodes, n)
		}
		return after.Mallocs - before.Mallocs
	}
	small, large := mallocs(1000), mallocs(21000)
	if per := (float64(large) - float64(small)) / 20000; per > 0.01 {
		t.Errorf("%.3f allocations per request (%d for 1000 requests, %d for 21000), want 0", per, small, large)
	}
}

// TestHTTP1ReconnectsAfterClose: a server that closes the connection
// after each response costs a reconnect, not an error, whether it says so
// (Connection: close) or not: then the next request, already sent on the
// closed connection, is sent again on a fresh one.
func TestHTTP1ReconnectsAfterClose(t *testing.T) {
	t.Parallel()
	for name, resp := range map[string]string{
		"saying so":      "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
		"without a word": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, conns := cannedServer(t, resp, 1)
			res := run(t, Options{URL: url, Connections: 1, Requests: 50})
			if res.Errors != 0 || res.StatusCodes[200] != 50 {
				t.Errorf("errors %v, status codes %v; want 50 × 200", res.ErrorKinds, res.StatusCodes)
			}
			if n := conns.Load(); n < 50 {
				t.Errorf("server saw %d connections for 50 requests, each closed after one", n)
			}
		})
	}
}

// TestHTTP1LargeRequest writes a request bigger than a socket buffer takes
// at once: the loop waits for the socket to be writable again.
func TestHTTP1LargeRequest(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	}, nil)
	body := strings.Repeat("b", 8<<20)
	res := run(t, Options{URL: srv.URL, Method: "POST", Body: []byte(body), Connections: 1, Requests: 3})
	if res.Errors != 0 || res.StatusCodes[200] != 3 {
		t.Errorf("errors %v, status codes %v", res.ErrorKinds, res.StatusCodes)
	}
}
