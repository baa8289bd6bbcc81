package app

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

func h2cClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

func TestH2C(t *testing.T) {
	t.Parallel()
	// The server speaks HTTP/1.1 and h2c on one port.
	gs := startGraph(t, mustGraph(t, "tiered"), GraphOptions{H2C: true})
	for _, tc := range []struct {
		name   string
		client *http.Client
		major  int
	}{
		{name: "http/1.1", client: &http.Client{Transport: &http.Transport{}}, major: 1},
		{name: "h2c", client: h2cClient(), major: 2},
	} {
		resp, err := tc.client.Get(gs.EntryURL("ns-1"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != tc.major {
			t.Errorf("%s: status %d over %s", tc.name, resp.StatusCode, resp.Proto)
		}
		_, root, _ := get(t, tc.client, gs.EntryURL("ns-1"))
		if root.servers() != 5 {
			t.Errorf("%s: %d servers", tc.name, root.servers())
		}
	}

	// With H2C set, downstream calls go out as HTTP/2.
	var proto atomic.Value
	b := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"service":"b","version":"v1","status":200,"calls":[]}`))
	}))
	b.Config.Protocols = new(http.Protocols)
	b.Config.Protocols.SetUnencryptedHTTP2(true)
	b.Start()
	t.Cleanup(b.Close)
	g := parseGraph(t, "{name: h, entry: a, services: [{name: a, script: [{call: b}]}, {name: b}]}")
	a := serveService(t, Options{Graph: g, Service: "a", H2C: true, Upstreams: map[string]string{"b": b.Listener.Addr().String()}})
	if status, _, _ := get(t, http.DefaultClient, "http://"+a+"/"); status != 200 || proto.Load() != "HTTP/2.0" {
		t.Errorf("status %d, downstream saw %v, want HTTP/2.0", status, proto.Load())
	}
}

func TestRunServesAndStops(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // free now; Run binds it
	ratings := testenv.RefusedAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Graph: mustGraph(t, "bookinfo"), Service: "reviews", Version: "v2", Namespace: "ns-7", Pod: "reviews-v2-1", Listen: addr,
			Upstreams: map[string]string{"ratings": ratings}})
	}()
	t.Cleanup(cancel)
	var ready bool
	for range 100 {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == 200
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !ready {
		t.Fatal("/readyz never answered 200")
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	// ratings is not running, so reviews-v2 answers 502 naming it.
	status, root, _ := get(t, http.DefaultClient, "http://"+addr+"/reviews/0")
	if status != 502 || root.Version != "v2" || root.Namespace != "ns-7" || root.Pod != "reviews-v2-1" || root.Calls[0].Service != "ratings" {
		t.Errorf("status %d, tree %+v", status, root)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestRunRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{name: "no graph", o: Options{Service: "a"}, want: "no graph"},
		{name: "unknown service", o: Options{Service: "nope"}, want: `service "nope" is not in graph`},
		{name: "version needed", o: Options{Service: "reviews"}, want: `has no version ""`},
		{name: "upstream not called", o: Options{Service: "details", Upstreams: map[string]string{"ratings": "127.0.0.1:1"}}, want: `--upstream ratings: service "details" does not call "ratings"`},
		{name: "bad upstream address", o: Options{Service: "productpage", Upstreams: map[string]string{"details": "nowhere"}}, want: "--upstream details=nowhere: want HOST:PORT"},
		{name: "bad listen", o: Options{Service: "details", Listen: "127.0.0.1:99999"}, want: "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.name != "no graph" {
				tt.o.Graph = mustGraph(t, "bookinfo")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := Run(ctx, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestStartGraphPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = StartGraph(context.Background(), GraphOptions{Graph: mustGraph(t, "tiered"), Listen: ln.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "ns-1 tier-1-app-a: listen") {
		t.Errorf("StartGraph error = %v", err)
	}
}

func TestCPUWork(t *testing.T) {
	t.Parallel()
	if used := threadCPUOf(func() { burnCPU(30 * time.Millisecond) }); used < 30*time.Millisecond {
		t.Errorf("burnCPU(30ms) used %s of CPU", used)
	}

	g := parseGraph(t, "{name: w, entry: a, services: [{name: a, cpu_work: 20ms}]}")
	a := serveService(t, Options{Graph: g, Service: "a"})
	if _, root, _ := get(t, http.DefaultClient, "http://"+a+"/"); root.Duration < 20 {
		t.Errorf("answer with 20ms of CPU work took %.3f ms", root.Duration)
	}
}
