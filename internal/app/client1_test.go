package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

// scriptedServer answers the requests on each connection with answers
// (raw bytes) in turn, closing the connection after the first one when
// closeAfter is set, and holding it open otherwise. It counts connections
// and records the last request head.
type scriptedServer struct {
	addr     string
	conns    atomic.Int32
	lastHead atomic.Value
	closed   chan struct{} // gets a value each time a client closes
}

func startScripted(t *testing.T, answers []string, closeAfter bool) *scriptedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptedServer{addr: ln.Addr().String(), closed: make(chan struct{}, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for _, a := range answers {
					var head strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						head.WriteString(line)
						if line == "\r\n" {
							break
						}
					}
					s.lastHead.Store(head.String())
					c.Write([]byte(a))
					if closeAfter {
						return
					}
				}
				io.Copy(io.Discard, br) // hold the connection until the client goes
				s.closed <- struct{}{}
			}()
		}
	}()
	return s
}

func TestHTTP1DownstreamAnswers(t *testing.T) {
	t.Parallel()
	const tree = `{"service":"b"}`
	tests := []struct {
		name       string
		answer     string
		wantStatus int
		wantJSON   bool
		wantBody   string
		wantKept   bool
	}{
		{name: "content-length", answer: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n" + tree,
			wantStatus: 200, wantJSON: true, wantBody: tree, wantKept: true},
		{name: "chunked", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json; charset=utf-8\r\n\r\n5\r\n{\"ser\r\na;ext=1\r\nvice\":\"b\"}\r\n0\r\nX-Trailer: y\r\n\r\n",
			wantStatus: 200, wantJSON: true, wantBody: tree, wantKept: true},
		{name: "interim 100 first", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nContent-Length: 19\r\n\r\nno healthy upstream",
			wantStatus: 503, wantBody: "no healthy upstream", wantKept: true},
		{name: "connection close", answer: "HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 19\r\n\r\nRBAC: access denied",
			wantStatus: 403, wantBody: "RBAC: access denied"},
		{name: "http/1.0 body to EOF", answer: "HTTP/1.0 200 OK\r\n\r\n" + tree, wantStatus: 200, wantBody: tree},
		{name: "no content", answer: "HTTP/1.1 204 No Content\r\n\r\n", wantStatus: 204, wantKept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startScripted(t, []string{tt.answer, tt.answer}, !tt.wantKept)
			d := newHTTP1Downstream(srv.addr, "b:8080")
			t.Cleanup(d.closeIdle)
			for i := range 2 {
				status, isJSON, body, err := d.get(context.Background(), 5*time.Second, nil)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if status != tt.wantStatus || isJSON != tt.wantJSON || string(body) != tt.wantBody {
					t.Errorf("call %d: %d json=%v %q; want %d json=%v %q", i, status, isJSON, body, tt.wantStatus, tt.wantJSON, tt.wantBody)
				}
			}
			wantConns := int32(2)
			if tt.wantKept {
				wantConns = 1
			}
			if n := srv.conns.Load(); n != wantConns {
				t.Errorf("2 calls used %d connections, want %d", n, wantConns)
			}
			if h, _ := srv.lastHead.Load().(string); !strings.HasPrefix(h, "GET / HTTP/1.1\r\nHost: b:8080\r\n") {
				t.Errorf("request head %q", h)
			}
		})
	}
}

func TestHTTP1DownstreamErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  string
		wantErr string
	}{
		{name: "garbage", answer: "SSH-2.0-OpenSSH\r\n", wantErr: "bad status line"},
		{name: "bad header", answer: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", wantErr: "bad header line"},
		{name: "bad length", answer: "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", wantErr: "bad Content-Length"},
		{name: "short body", answer: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", wantErr: "EOF"},
		{name: "bad chunk", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", wantErr: "bad chunk size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startScripted(t, []string{tt.answer}, true)
			d := newHTTP1Downstream(srv.addr, "b:8080")
			_, _, _, err := d.get(context.Background(), 5*time.Second, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestHTTP1DownstreamRetriesStaleConnection(t *testing.T) {
	t.Parallel()
	// The server answers once per connection, with keep-alive, then closes:
	// the second call finds its pooled connection dead and must redial.
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
	srv := startScripted(t, []string{ok}, true)
	d := newHTTP1Downstream(srv.addr, "b:8080")
	t.Cleanup(d.closeIdle)
	for i := range 3 {
		if status, _, _, err := d.get(context.Background(), 5*time.Second, nil); err != nil || status != 200 {
			t.Fatalf("call %d: %d %v", i, status, err)
		}
		time.Sleep(20 * time.Millisecond) // let the server's close arrive
	}
	if n := srv.conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

// After a mesh's capture change resets every connection (or a server
// restarts), the whole pool is dead, not one connection: the next call
// must still succeed, on one new connection, rather than try the dead
// ones in turn and answer an error.
func TestHTTP1DownstreamDropsDeadPool(t *testing.T) {
	t.Parallel()
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
	srv := startScripted(t, []string{ok}, true)
	d := newHTTP1Downstream(srv.addr, "b:8080")
	t.Cleanup(d.closeIdle)
	const pooled = 4
	for range pooled {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		cc := &clientConn{c: c, br: bufio.NewReader(c)}
		if _, _, _, keep, _, err := cc.roundTrip(d.req, nil); err != nil || !keep {
			t.Fatalf("filling the pool: keep %v, %v", keep, err)
		}
		d.put(cc)
	}
	time.Sleep(50 * time.Millisecond) // let the server's closes arrive
	if status, _, _, err := d.get(context.Background(), 5*time.Second, nil); err != nil || status != 200 {
		t.Fatalf("call on a dead pool: %d %v", status, err)
	}
	if n := srv.conns.Load(); n != pooled+1 {
		t.Errorf("%d connections, want %d: the dead pool and one new", n, pooled+1)
	}
}

func TestHTTP1DownstreamTimeoutAndCancel(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: downstream timeout bounds")
	t.Parallel()
	srv := startScripted(t, nil, false) // reads the request, never answers
	d := newHTTP1Downstream(srv.addr, "b:8080")
	start := time.Now()
	_, _, _, err := d.get(context.Background(), 100*time.Millisecond, nil)
	if !errors.Is(err, errCallTimeout) || time.Since(start) > 2*time.Second {
		t.Errorf("after %s: error %v, want a call timeout", time.Since(start), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, _, _, err = d.get(ctx, 10*time.Second, nil)
	if err == nil || errors.Is(err, errCallTimeout) || time.Since(start) > 3*time.Second {
		t.Errorf("cancelled call: error %v, want a cancellation, not a timeout", err)
	}
}

func TestHostHeaderIsServiceName(t *testing.T) {
	t.Parallel()
	var host atomic.Value
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host.Store(r.Host)
		w.Write([]byte(`{}`))
	})}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Protocols = p
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	g := parseGraph(t, "{name: h, entry: a, services: [{name: a, script: [{call: b}]}, {name: b, port: 9080}]}")
	for _, h2c := range []bool{false, true} {
		a := serveService(t, Options{Graph: g, Service: "a", H2C: h2c, Upstreams: map[string]string{"b": ln.Addr().String()}})
		get(t, http.DefaultClient, "http://"+a+"/")
		if got := host.Load(); got != "b:9080" {
			t.Errorf("h2c=%v: downstream saw Host %v, want b:9080", h2c, got)
		}
	}
}
