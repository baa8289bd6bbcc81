package app

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/topology"

	"github.com/meshbench/meshbench/internal/testenv"
)

func parseGraph(t *testing.T, yaml string) *topology.Graph {
	t.Helper()
	g, err := topology.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// serveService serves one service of g on loopback until the test ends,
// its upstreams at the given addresses.
func serveService(t *testing.T, o Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, o, ln)
}

func serveOn(t *testing.T, o Options, ln net.Listener) string {
	t.Helper()
	h, err := newServiceHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, ln, h, true, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		h.closeIdle()
		cancel()
		<-done
	})
	return ln.Addr().String()
}

const chain = `
name: chain
entry: a
services:
- name: a
  script:
  - call: b
  - call: d
- name: b
  script: [{call: c}]
- name: c
- name: d
`

func TestDownstreamDown(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, chain)
	d := serveService(t, Options{Graph: g, Service: "d"})
	b := serveService(t, Options{Graph: g, Service: "b", Upstreams: map[string]string{"c": testenv.RefusedAddr(t)}})
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b, "d": d}})

	status, root, _ := get(t, http.DefaultClient, "http://"+a+"/")
	if status != http.StatusBadGateway || root.Status != 502 {
		t.Fatalf("a answered %d (tree %d), want 502", status, root.Status)
	}
	if len(root.Calls) != 1 {
		t.Fatalf("a made calls %+v; want only b, the script stopping at the failure", root.Calls)
	}
	bn := root.Calls[0]
	if bn.Service != "b" || bn.Status != 502 || len(bn.Calls) != 1 {
		t.Fatalf("b node = %+v", bn)
	}
	if cn := bn.Calls[0]; cn.Service != "c" || cn.Status != 502 || !strings.Contains(cn.Error, "connection refused") {
		t.Errorf("c node = %+v, want 502 with connection refused", cn)
	}
}

func TestDownstreamTimeout(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: downstream timeout bounds")
	t.Parallel()
	g := parseGraph(t, `
name: slow
entry: root
services:
- name: root
  script: [{call: a}]
- name: a
  script: [{call: slow}]
- name: slow
  latency: 1500ms
`)
	slow := serveService(t, Options{Graph: g, Service: "slow"})
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"slow": slow}, CallTimeout: 200 * time.Millisecond})
	root := serveService(t, Options{Graph: g, Service: "root", Upstreams: map[string]string{"a": a}, CallTimeout: 5 * time.Second})

	start := time.Now()
	status, tree, _ := get(t, http.DefaultClient, "http://"+root+"/")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("answer took %s; the 200ms call timeout should bound it", took)
	}
	if status != http.StatusGatewayTimeout || tree.Status != 504 {
		t.Fatalf("root answered %d (tree %d), want 504", status, tree.Status)
	}
	an := tree.Calls[0]
	if an.Status != 504 || len(an.Calls) != 1 {
		t.Fatalf("a node = %+v", an)
	}
	if sn := an.Calls[0]; sn.Service != "slow" || sn.Status != 504 || sn.Error != "timeout after 200ms" {
		t.Errorf("slow node = %+v", sn)
	}
}

func TestDownstreamForeignAnswers(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: x, entry: a, services: [{name: a, script: [{call: b}]}, {name: b}]}")
	tests := []struct {
		name       string
		status     int
		body       string
		wantStatus int // of b's node
		wantErr    string
	}{
		{name: "policy denial", status: 403, body: "RBAC: access denied", wantStatus: 403, wantErr: "RBAC: access denied"},
		{name: "proxy 503", status: 503, body: "no healthy upstream", wantStatus: 503, wantErr: "no healthy upstream"},
		{name: "200 but not a tree", status: 200, body: "<html>", wantStatus: 502, wantErr: "not a JSON call tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			t.Cleanup(b.Close)
			a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b.Listener.Addr().String()}})
			status, root, _ := get(t, http.DefaultClient, "http://"+a+"/")
			if status != 502 {
				t.Errorf("a answered %d, want 502", status)
			}
			if n := root.Calls[0]; n.Service != "b" || n.Status != tt.wantStatus || !strings.Contains(n.Error, tt.wantErr) {
				t.Errorf("b node = %+v", n)
			}
		})
	}
}

func TestParallelGroupFailure(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, `
name: p
entry: a
services:
- name: a
  script:
  - parallel: [ok, down]
  - call: ok
- name: ok
- name: down
`)
	ok := serveService(t, Options{Graph: g, Service: "ok"})
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"ok": ok, "down": testenv.RefusedAddr(t)}})
	status, root, _ := get(t, http.DefaultClient, "http://"+a+"/")
	if status != 502 || len(root.Calls) != 2 || root.Calls[0].Status != 200 || root.Calls[1].Status != 502 {
		t.Errorf("status %d, calls %+v; want 502 with ok then down, and no third call", status, root.Calls)
	}
}

func TestCountAndProbability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		call     string
		min, max int
	}{
		{name: "count", call: "{service: leaf, count: 4}", min: 4, max: 4},
		{name: "default count", call: "leaf", min: 1, max: 1},
		{name: "probability 1", call: "{service: leaf, count: 5, probability: 1}", min: 5, max: 5},
		// Binomial(200, 0.25): mean 50, sd 6.1; the bounds are 5 sd out.
		{name: "probability 0.25", call: "{service: leaf, count: 200, probability: 0.25}", min: 20, max: 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := parseGraph(t, "{name: c, entry: a, services: [{name: a, script: [{call: "+tt.call+"}]}, {name: leaf}]}")
			gs := startGraph(t, g, GraphOptions{})
			_, root, _ := get(t, http.DefaultClient, gs.EntryURL("ns-1"))
			if n := len(root.Calls); n < tt.min || n > tt.max {
				t.Errorf("%d calls, want %d to %d", n, tt.min, tt.max)
			}
		})
	}
}

func TestResponseSize(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: s, entry: a, services: [{name: a, response_size: 2700, script: [{call: {service: b, count: 40}}]}, {name: b, response_size: 100}]}")
	b := serveService(t, Options{Graph: g, Service: "b"})
	_, leaf, body := get(t, http.DefaultClient, "http://"+b+"/")
	if len(body) != 100 || leaf.Payload == "" {
		t.Errorf("leaf answer is %d bytes, want exactly 100:\n%s", len(body), body)
	}
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b}})
	_, root, body := get(t, http.DefaultClient, "http://"+a+"/")
	if root.Payload != "" || len(body) < 40*100 {
		t.Errorf("a tree larger than response_size must not be padded: %d bytes, payload %d", len(body), len(root.Payload))
	}
}

func TestDownstreamKeepAlive(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, "{name: k, entry: a, services: [{name: a, script: [{call: b}]}, {name: b}]}")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: ln}
	b := serveOn(t, Options{Graph: g, Service: "b"}, counting)
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b}})
	for range 20 {
		if status, _, _ := get(t, http.DefaultClient, "http://"+a+"/"); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	if n := counting.accepted.Load(); n != 1 {
		t.Errorf("20 sequential calls opened %d connections to b, want 1", n)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}
