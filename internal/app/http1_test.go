package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHTTP1(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: h, entry: a, services: [{name: a, response_size: 200}]}")
	addr := serveService(t, Options{Graph: g, Service: "a"})
	type want struct {
		status int
		body   string // prefix; "" means empty
	}
	tree := `{"service":"a"`
	tests := []struct {
		name   string
		send   string
		heads  []bool // per expected response: was it a HEAD request
		want   []want
		closed bool // server closes after the last response
	}{
		{name: "get", send: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", want: []want{{200, tree}}},
		{name: "pipelined", send: "GET /x HTTP/1.1\r\nHost: a\r\n\r\nGET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
			want: []want{{200, tree}, {200, "ok"}}},
		{name: "leading empty lines", send: "\r\n\r\nGET / HTTP/1.1\r\n\r\n", want: []want{{200, tree}}},
		{name: "connection close", send: "GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", want: []want{{200, tree}}, closed: true},
		{name: "http/1.0 closes", send: "GET / HTTP/1.0\r\n\r\n", want: []want{{200, tree}}, closed: true},
		{name: "http/1.0 keep-alive", send: "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
			want: []want{{200, tree}, {200, tree}}, closed: true},
		{name: "content-length body", send: "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /healthz HTTP/1.1\r\n\r\n",
			want: []want{{200, tree}, {200, "ok"}}},
		{name: "chunked body", send: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nTrailer: 1\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n",
			want: []want{{200, tree}, {200, "ok"}}},
		{name: "expect 100-continue", send: "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
			want: []want{{100, ""}, {200, tree}}},
		{name: "head", send: "HEAD / HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", heads: []bool{true, false},
			want: []want{{200, ""}, {200, "ok"}}},
		{name: "absolute form", send: "GET http://a:8080/healthz?x=1 HTTP/1.1\r\n\r\n", want: []want{{200, "ok"}}},
		{name: "bad request line", send: "NONSENSE\r\n\r\n", want: []want{{400, ""}}, closed: true},
		{name: "bad header", send: "GET / HTTP/1.1\r\nno colon\r\n\r\n", want: []want{{400, ""}}, closed: true},
		{name: "conflicting lengths", send: "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", want: []want{{400, ""}}, closed: true},
		{name: "upload over the bound", send: "POST / HTTP/1.1\r\nContent-Length: 1073741825\r\n\r\nab", want: []want{{413, ""}}, closed: true},
		{name: "chunked upload over the bound", send: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3fffffff\r\nab", want: []want{{413, ""}}, closed: true},
		{name: "bad chunk", send: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", want: []want{{400, ""}}, closed: true},
		{name: "unsupported version", send: "GET / HTTP/3.0\r\n\r\n", want: []want{{505, ""}}, closed: true},
		{name: "request line too long", send: "GET /" + strings.Repeat("a", 5000) + " HTTP/1.1\r\n\r\n", want: []want{{414, ""}}, closed: true},
		{name: "headers too large", send: "GET / HTTP/1.1\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 70) + "\r\n",
			want: []want{{431, ""}}, closed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			for i, w := range tt.want {
				method := http.MethodGet
				if i < len(tt.heads) && tt.heads[i] {
					method = http.MethodHead
				}
				resp, err := http.ReadResponse(br, &http.Request{Method: method})
				if err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != w.status || !strings.HasPrefix(string(body), w.body) || (w.body == "" && len(body) > 0) {
					t.Errorf("response %d: %d %q, want %d %q...", i, resp.StatusCode, body, w.status, w.body)
				}
				if resp.StatusCode == 200 && resp.Header.Get("Date") == "" {
					t.Errorf("response %d has no Date header", i)
				}
			}
			// Either the server closes (a reset when it left a request
			// unread), or the connection takes another request.
			if tt.closed {
				if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
					t.Errorf("connection still open after the last response (read: %v)", err)
				}
				return
			}
			io.WriteString(c, "GET /healthz HTTP/1.1\r\n\r\n")
			if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
				t.Errorf("connection not reusable: %v", err)
			}
		})
	}
}

func TestHTTP1ShutdownClosesIdle(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: h, entry: a, services: [{name: a}]}")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newServiceHandler(Options{Graph: g, Service: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, h, true, slog.New(slog.DiscardHandler)) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	cancel() // the connection is idle now: shutdown must close it at once
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(drainTimeout / 2):
		t.Fatal("serve waited on an idle connection")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection not closed: %v", err)
	}
}
