package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientGoneCancelsCalls(t *testing.T) {
	t.Parallel()
	b := startScripted(t, nil, false) // takes the call, never answers
	g := parseGraph(t, "{name: w, entry: a, services: [{name: a, script: [{call: b}]}, {name: b}]}")
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b.addr}})
	c, err := net.Dial("tcp", a)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	for b.conns.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	c.Close()
	select {
	case <-b.closed: // a gave up its call, well before the 10 s call timeout
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on after the client went away")
	}
}

func TestWatchKeepsPipelinedRequest(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: w, entry: a, services: [{name: a, latency: 100ms}]}")
	a := serveService(t, Options{Graph: g, Service: "a"})
	c, err := net.Dial("tcp", a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /first HTTP/1.1\r\n\r\n")
	time.Sleep(20 * time.Millisecond) // the first request is waiting out its latency
	io.WriteString(c, "GET /healthz HTTP/1.1\r\n\r\n")
	br := bufio.NewReader(c)
	for i, want := range []string{`{"service":"a"`, "ok"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), want) {
			t.Errorf("response %d: %d %q, want 200 %q", i, resp.StatusCode, body, want)
		}
	}
}
