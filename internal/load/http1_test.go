package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// cannedServer answers every request it reads on a connection with resp,
// until the client goes away.
func cannedServer(t *testing.T, resp string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				out := []byte(resp)
				for {
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
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func TestHTTP1RoundTripAllocatesNothing(t *testing.T) {
	testenv.SkipUnderRace(t, "counts allocations, and the race detector allocates")
	url := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	o := Options{URL: url, Method: "GET", Timeout: time.Second}
	tg, err := parseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	c := newHTTP1Conn(newDialer(tg, &o, "http/1.1"), http1Request(&o, tg), &o)
	t.Cleanup(c.abort)
	ctx := context.Background()
	if err := c.connect(ctx); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if status, err := c.roundTrip(ctx, time.Now()); err != nil || status != 200 {
			t.Fatalf("roundTrip = %d, %v", status, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request, want 0", allocs)
	}
}

// TestHTTP1ReconnectsAfterClose: a server that closes after each response
// costs a reconnect, not an error.
func TestHTTP1ReconnectsAfterClose(t *testing.T) {
	t.Parallel()
	url := cannedServer(t, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
	res := run(t, Options{URL: url, Connections: 2, Requests: 50})
	if res.Errors != 0 || res.StatusCodes[200] != 50 {
		t.Errorf("errors %v, status codes %v", res.ErrorKinds, res.StatusCodes)
	}
}

// TestHTTP1LargeRequest writes a request bigger than a socket buffer takes
// at once, through the raw path's fallback.
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
