package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshbench/meshbench/internal/grpcapp"
	"github.com/meshbench/meshbench/internal/testenv"
)

// callGRPC makes the test service's gRPC call to addr and decodes the tree,
// from the answer or, for a failed call, from the status message.
func callGRPC(t *testing.T, addr string) (codes.Code, node) {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := new(wrapperspb.BytesValue)
	err = cc.Invoke(ctx, grpcapp.Method, &wrapperspb.BytesValue{}, out)
	body := out.Value
	if err != nil {
		body = []byte(status.Convert(err).Message())
	}
	var n node
	if err := json.Unmarshal(body, &n); err != nil {
		t.Fatalf("answer is not a call tree: %v (%v)\n%s", err, status.Code(err), body)
	}
	return status.Code(err), n
}

func TestGRPC(t *testing.T) {
	t.Parallel()
	// a calls b over gRPC, c over h2c and b again over HTTP/1.1; c calls d
	// over gRPC. Each edge keeps its protocol whatever the caller was
	// called with.
	g := parseGraph(t, `
name: g
entry: a
entry_protocol: grpc
services:
- name: a
  response_size: 3000
  script:
  - call: {service: b, protocol: grpc}
  - parallel: [{service: c, protocol: h2c}, b]
- name: b
  response_size: 500
- name: c
  script: [{call: {service: d, protocol: grpc}}]
- name: d
`)
	gs := startGraph(t, g, GraphOptions{})
	entry := gs.Endpoints[0].Addr
	code, root := callGRPC(t, entry)
	if code != codes.OK || root.Status != 200 || root.servers() != 5 {
		t.Fatalf("gRPC: code %v, status %d, %d servers; want OK, 200, 5", code, root.Status, root.servers())
	}
	if len(root.Calls) != 3 || root.Calls[0].Service != "b" || root.Calls[1].Calls[0].Service != "d" {
		t.Errorf("call tree = %+v", root)
	}
	// The HTTP answer and the gRPC one are the same tree, padded alike.
	_, hroot, body := get(t, http.DefaultClient, "http://"+entry+"/")
	if hroot.servers() != 5 || len(body) < 3000 {
		t.Errorf("HTTP: %d servers, %d bytes", hroot.servers(), len(body))
	}
	// The entry counts both answers, and not the health checks or itself.
	if resp, err := http.Get("http://" + entry + "/healthz"); err == nil {
		resp.Body.Close()
	}
	resp, err := http.Get("http://" + entry + RequestsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, _ := io.ReadAll(resp.Body)
	if string(n) != "2\n" {
		t.Errorf("%s = %q, want 2", RequestsPath, n)
	}
}

func TestGRPCFailures(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, `
name: g
entry: a
services:
- name: a
  script: [{call: {service: b, protocol: grpc}}]
- name: b
  script: [{call: {service: c, protocol: grpc}}]
- name: c
`)
	// b's upstream refuses: b answers 502 with its tree as the status
	// message, and a embeds that tree.
	b := serveService(t, Options{Graph: g, Service: "b", Upstreams: map[string]string{"c": testenv.RefusedAddr(t)}})
	a := serveService(t, Options{Graph: g, Service: "a", Upstreams: map[string]string{"b": b}})
	code, root := callGRPC(t, a)
	if code != codes.Unavailable || root.Status != http.StatusBadGateway {
		t.Fatalf("code %v, status %d; want Unavailable, 502", code, root.Status)
	}
	if len(root.Calls) != 1 || root.Calls[0].Service != "b" || root.Calls[0].Version != "v1" || root.Calls[0].Status != http.StatusBadGateway {
		t.Fatalf("a's calls = %+v; want b's own tree with 502", root.Calls)
	}
	if c := root.Calls[0].Calls; len(c) != 1 || c[0].Service != "c" || c[0].Error == "" {
		t.Errorf("b's calls = %+v; want an error node for c", c)
	}

	// A downstream that never answers in time: 504.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	slow := serveService(t, Options{Graph: g, Service: "b", CallTimeout: 200 * time.Millisecond, Upstreams: map[string]string{"c": ln.Addr().String()}})
	code, root = callGRPC(t, slow)
	if code != codes.DeadlineExceeded || root.Status != http.StatusGatewayTimeout {
		t.Errorf("silent upstream: code %v, status %d; want DeadlineExceeded, 504", code, root.Status)
	}
}

// viaResponder answers every request with "{}" and records whether the
// last one came through net/http's server (its context carries the
// server) or another path.
type viaResponder struct{ netHTTP atomic.Bool }

func (r *viaResponder) mayWait() bool { return false }
func (r *viaResponder) respond(ctx context.Context, b []byte) ([]byte, int) {
	r.netHTTP.Store(ctx.Value(http.ServerContextKey) != nil)
	return append(b, "{}"...), http.StatusOK
}

func TestGRPCConnectionsByProtocol(t *testing.T) {
	t.Parallel()
	for _, native := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r := new(viaResponder)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, ln, r, native, slog.New(slog.DiscardHandler)) }()
		addr := ln.Addr().String()
		// A gRPC connection goes to grpc-go's transport when the
		// service's HTTP/2 callers do not mix protocols, else through
		// net/http; an h2c connection, and HTTP/1.1, always answer.
		if code, _ := callGRPC(t, addr); code != codes.OK || r.netHTTP.Load() == native {
			t.Errorf("native %v: gRPC code %v, through net/http %v", native, code, r.netHTTP.Load())
		}
		for _, c := range []*http.Client{newH2CClient(), http.DefaultClient} {
			resp, err := c.Get("http://" + addr + "/")
			if err != nil {
				t.Fatalf("native %v: %v", native, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("native %v: %s answered %d", native, resp.Proto, resp.StatusCode)
			}
		}
		cancel()
		<-done
	}
}

func TestMixesHTTP2(t *testing.T) {
	t.Parallel()
	g := parseGraph(t, `
name: g
entry: a
entry_protocol: h2c
services:
- name: a
  script: [{call: {service: b, protocol: grpc}}, {call: c}]
- name: b
- name: c
  script: [{call: {service: b, protocol: h2c}}, {call: {service: d, protocol: grpc}}]
- name: d
- name: x
  script: [{call: {service: a, protocol: grpc}}]
`)
	for _, tt := range []struct {
		name, service  string
		forceH2C, want bool
	}{
		{"grpc and h2c edges", "b", false, true},
		{"entry over h2c, called over grpc", "a", false, true},
		{"http edge only", "c", false, false},
		{"http edge forced to h2c, no grpc", "c", true, false},
		{"grpc only", "d", false, false},
	} {
		if got := mixesHTTP2(g, tt.service, tt.forceH2C); got != tt.want {
			t.Errorf("%s: mixesHTTP2(%s) = %v, want %v", tt.name, tt.service, got, tt.want)
		}
	}
}
