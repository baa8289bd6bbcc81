package load

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/meshbench/meshbench/internal/testenv"
)

// countingServer serves 200 "ok" and counts requests, new connections and
// the protocols seen.
type countingServer struct {
	*httptest.Server
	requests atomic.Int64
	conns    atomic.Int64
	mu       sync.Mutex
	protos   map[string]int
}

func newCountingServer(t *testing.T, h http.HandlerFunc, start func(*httptest.Server)) *countingServer {
	t.Helper()
	cs := &countingServer{protos: map[string]int{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.requests.Add(1)
		cs.mu.Lock()
		cs.protos[r.Proto]++
		cs.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	cs.Server = httptest.NewUnstartedServer(handler)
	cs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cs.conns.Add(1)
		}
	}
	if start == nil {
		cs.Start()
	} else {
		start(cs.Server)
	}
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) protoCounts() map[string]int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return maps.Clone(cs.protos)
}

func run(t *testing.T, o Options) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	res, err := Run(ctx, o, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func none(n int64) bool     { return n == 0 }
func fiveEach(n int64) bool { return n >= 38 && n <= 39 }

func TestRunProtocols(t *testing.T) {
	t.Parallel()
	h2cStart := func(s *httptest.Server) {
		s.Config.Handler = h2c.NewHandler(s.Config.Handler, &http2.Server{})
		s.Start()
	}
	tlsH2 := func(s *httptest.Server) {
		s.EnableHTTP2 = true
		s.StartTLS()
	}
	tests := []struct {
		name      string
		start     func(*httptest.Server)
		opts      Options
		wantProto string
		wantConns func(n int64) bool
		// wantNew is the connections the measured phase opened: those
		// opened before the clock started do not count.
		wantNew func(n int64) bool
	}{
		{name: "HTTP/1.1 keep-alive", opts: Options{Connections: 4}, wantProto: "HTTP/1.1",
			wantConns: func(n int64) bool { return n == 4 }, wantNew: none},
		{name: "HTTP/1.1 without keep-alive", opts: Options{Connections: 2, NoKeepAlive: true}, wantProto: "HTTP/1.1",
			wantConns: func(n int64) bool { return n == 200 }, wantNew: func(n int64) bool { return n == 200 }},
		// 200 requests 5 a connection: 40 connections, one more for each
		// whose share was no multiple of 5; 2 opened before the clock.
		{name: "HTTP/1.1 5 requests a connection", opts: Options{Connections: 2, ConnRequests: 5}, wantProto: "HTTP/1.1",
			wantConns: func(n int64) bool { return n >= 40 && n <= 41 }, wantNew: fiveEach},
		{name: "TLS HTTP/1.1 5 requests a connection", start: tlsH2, opts: Options{Connections: 2, ConnRequests: 5, Insecure: true}, wantProto: "HTTP/1.1",
			wantConns: func(n int64) bool { return n >= 40 && n <= 41 }, wantNew: fiveEach},
		{name: "h2c prior knowledge", start: h2cStart, opts: Options{Connections: 3, HTTP2: true}, wantProto: "HTTP/2.0",
			wantConns: func(n int64) bool { return n == 3 }, wantNew: none},
		{name: "TLS with ALPN h2", start: tlsH2, opts: Options{Connections: 2, HTTP2: true, Insecure: true}, wantProto: "HTTP/2.0",
			wantConns: func(n int64) bool { return n == 2 }, wantNew: none},
		{name: "TLS HTTP/1.1", start: tlsH2, opts: Options{Connections: 2, Insecure: true}, wantProto: "HTTP/1.1",
			wantConns: func(n int64) bool { return n == 2 }, wantNew: none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newCountingServer(t, nil, tt.start)
			o := tt.opts
			o.URL = srv.URL + "/x"
			o.Requests = 200
			res := run(t, o)
			if res.Requests != 200 || res.StatusCodes[200] != 200 || res.Errors != 0 {
				t.Fatalf("requests %d, 200s %d, errors %d %v; want 200 OK", res.Requests, res.StatusCodes[200], res.Errors, res.ErrorKinds)
			}
			if got := srv.requests.Load(); got != 200 {
				t.Errorf("server saw %d requests, want 200", got)
			}
			if got := srv.protoCounts(); got[tt.wantProto] != 200 {
				t.Errorf("server saw protocols %v, want 200 %s", got, tt.wantProto)
			}
			if n := srv.conns.Load(); !tt.wantConns(n) {
				t.Errorf("server saw %d connections", n)
			}
			if !tt.wantNew(res.NewConnections) {
				t.Errorf("result counts %d new connections", res.NewConnections)
			}
			before := int64(o.Connections)
			if o.NoKeepAlive {
				before = 0
			}
			if n := srv.conns.Load(); n != before+res.NewConnections {
				t.Errorf("server saw %d connections; the result counts %d opened by requests, %d before", n, res.NewConnections, before)
			}
			if res.Latency.Count() != 200 || res.ByClass["2xx"].Count() != 200 {
				t.Errorf("latency histogram holds %d, 2xx %d; want 200", res.Latency.Count(), res.ByClass["2xx"].Count())
			}
		})
	}
}

// An upload sends BodySize bytes of filler as each request's body, over
// plain HTTP/1.1 (the loops, writing what the socket takes as it takes
// it), TLS HTTP/1.1 and h2c, and the result records the size, not the
// bytes.
func TestRunUpload(t *testing.T) {
	t.Parallel()
	const size = 3 << 20
	h2cStart := func(s *httptest.Server) {
		s.Config.Handler = h2c.NewHandler(s.Config.Handler, &http2.Server{})
		s.Start()
	}
	tlsStart := func(s *httptest.Server) { s.StartTLS() }
	for _, tt := range []struct {
		name  string
		start func(*httptest.Server)
		opts  Options
	}{
		{"HTTP/1.1", nil, Options{}},
		{"TLS HTTP/1.1", tlsStart, Options{Insecure: true}},
		{"h2c", h2cStart, Options{HTTP2: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var wrong atomic.Int64
			srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
				n, err := io.Copy(io.Discard, r.Body)
				if err != nil || n != size || r.ContentLength != size || r.Method != http.MethodPost {
					wrong.Add(1)
				}
				_, _ = w.Write([]byte("ok"))
			}, tt.start)
			o := tt.opts
			o.URL, o.Method, o.BodySize, o.Connections, o.Requests = srv.URL+"/up", http.MethodPost, size, 2, 6
			res := run(t, o)
			if res.StatusCodes[200] != 6 || res.Errors != 0 || wrong.Load() != 0 {
				t.Fatalf("200s %d, errors %d %v, %d requests without a %d-byte POST body", res.StatusCodes[200], res.Errors, res.ErrorKinds, wrong.Load(), size)
			}
			if res.Options.BodySize != size || len(res.Options.Body) != 0 {
				t.Errorf("result records body size %d and %d body bytes; want the size alone", res.Options.BodySize, len(res.Options.Body))
			}
		})
	}
	if _, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1/", Connections: 1, Requests: 1, BodySize: MaxBodySize + 1}, nil); err == nil || !strings.Contains(err.Error(), "body-size") {
		t.Errorf("an upload over the bound: %v, want an error naming body-size", err)
	}
}

func TestRunStatusClassesAndChunks(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		i := n.Add(1)
		if i%4 == 0 {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		// Flushing before the end makes net/http send a chunked body.
		for range 3 {
			_, _ = w.Write([]byte(strings.Repeat("c", 1000)))
			w.(http.Flusher).Flush()
		}
	}, nil)
	res := run(t, Options{URL: srv.URL, Connections: 1, Requests: 100})
	if res.StatusCodes[200] != 75 || res.StatusCodes[503] != 25 {
		t.Fatalf("status codes %v, want 75×200 and 25×503", res.StatusCodes)
	}
	if res.ByClass["2xx"].Count() != 75 || res.ByClass["5xx"].Count() != 25 {
		t.Errorf("by class 2xx %d 5xx %d", res.ByClass["2xx"].Count(), res.ByClass["5xx"].Count())
	}
	if srv.conns.Load() != 1 {
		t.Errorf("%d connections: chunked bodies were not read to their end", srv.conns.Load())
	}
}

// TestRunWarmupExcluded: the server answers 202 to requests that reached
// it well inside the warm-up, so any 202 in the results means the warm-up
// leaked in.
func TestRunWarmupExcluded(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: requests made within a 300 ms warm-up")
	t.Parallel()
	var start atomic.Pointer[time.Time]
	warmup := 300 * time.Millisecond
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		if time.Since(*start.Load()) < warmup-50*time.Millisecond {
			w.WriteHeader(http.StatusAccepted)
		}
	}, nil)
	for _, rate := range []float64{0, 200} {
		t.Run(fmt.Sprintf("rate %g", rate), func(t *testing.T) {
			now := time.Now()
			start.Store(&now)
			srv.requests.Store(0)
			res := run(t, Options{URL: srv.URL, Connections: 4, Rate: rate, Warmup: warmup, Requests: 50})
			if res.Requests != 50 || res.StatusCodes[200] != 50 {
				t.Errorf("measured %d requests, status codes %v; want 50 × 200", res.Requests, res.StatusCodes)
			}
			if srv.requests.Load() <= 60 {
				t.Errorf("server saw %d requests: no warm-up ran", srv.requests.Load())
			}
			if res.Start.Sub(now) < warmup {
				t.Errorf("measured phase began %v after the start, before the warm-up ended", res.Start.Sub(now))
			}
		})
	}
}

// TestRunOpenLoopRate: with one connection, on more than one P, the loop
// waits keeping its P; with as many connections as Ps, it parks.
func TestRunOpenLoopRate(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: achieved open-loop rate")
	t.Parallel()
	srv := newCountingServer(t, nil, nil)
	for _, conns := range []int{1, max(8, runtime.GOMAXPROCS(0))} {
		t.Run(fmt.Sprint(conns, " connections"), func(t *testing.T) {
			res := run(t, Options{URL: srv.URL, Connections: conns, Rate: 500, Duration: time.Second})
			if res.Requests != 500 {
				t.Errorf("%d requests in 1s at 500/s, want exactly 500", res.Requests)
			}
			if res.Uncorrected.Count() != 500 || res.SendLag.Count() != 500 {
				t.Errorf("uncorrected %d, send lag %d samples; want 500", res.Uncorrected.Count(), res.SendLag.Count())
			}
			// The pacer never sends ahead of its schedule.
			if res.AchievedRate > 501 {
				t.Errorf("achieved rate %.1f, above the 500/s asked", res.AchievedRate)
			}
			// On a shared machine a stall can make it late (the bench
			// checks the rate to 0.1% on a quiet host); lateness is never
			// silent: the send lag holds it and the result is flagged.
			if res.AchievedRate < 495 {
				late := time.Duration(float64(res.Requests)/res.AchievedRate*float64(time.Second)) - time.Second
				if !res.Distorted || res.SendLag.Max() < late*8/10 {
					t.Errorf("achieved rate %.1f (last send about %v late): distorted %v, send lag max %v; a shortfall must be flagged and in the send lag",
						res.AchievedRate, late, res.Distorted, res.SendLag.Max())
				}
			}
		})
	}
}

func TestRunCancelReturnsPartialResult(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Options{URL: srv.URL, Connections: 2, Rate: 100, Duration: time.Minute}, nil)
	if err == nil || res == nil {
		t.Fatalf("Run = %v, %v; want a partial result and the context's error", res, err)
	}
	if res.Requests < 10 || res.Requests > 40 || res.Errors != 0 {
		t.Errorf("partial result: %d requests, %d errors", res.Requests, res.Errors)
	}
}

// TestRunWarmupSettles: with WarmupMax, a closed loop's warm-up lasts
// until its throughput stops rising: past a server's cold start, which a
// fixed warm-up would measure as its capacity; no longer than Warmup on a
// server that is warm from the start; and at most WarmupMax, with a
// warning, on one whose throughput rises to the end.
func TestRunWarmupSettles(t *testing.T) {
	testenv.SkipUnderRace(t, "timing-sensitive: throughput compared over 200 ms windows")
	t.Parallel()
	const warmup = 400 * time.Millisecond
	tests := []struct {
		name string
		// delay is how long the server takes to answer, d after the start.
		delay    func(d time.Duration) time.Duration
		most     time.Duration
		min, max time.Duration // the warm-up's length
		warned   bool
	}{
		{name: "cold for 1.4 s", delay: func(d time.Duration) time.Duration {
			// Answers take 48 ms at first, half as long every 250 ms, and
			// 1 ms from 1.4 s on: a cold start that a fixed warm-up of
			// 400 ms would measure.
			return max(time.Millisecond, time.Duration(48e6*math.Exp2(-d.Seconds()/0.25)))
		}, most: 4 * time.Second, min: 1400 * time.Millisecond, max: 2800 * time.Millisecond},
		{name: "warm from the start", delay: func(time.Duration) time.Duration { return 2 * time.Millisecond },
			most: 4 * time.Second, min: warmup, max: 2 * warmup},
		{name: "throughput doubling every window", delay: func(d time.Duration) time.Duration {
			return 64 * time.Millisecond >> (d / (200 * time.Millisecond))
		}, most: time.Second, min: time.Second, max: time.Second, warned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var start atomic.Pointer[time.Time]
			srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) {
				if s := start.Load(); s != nil {
					time.Sleep(tt.delay(time.Since(*s)))
				}
				_, _ = w.Write([]byte("ok"))
			}, nil)
			now := time.Now()
			start.Store(&now)
			res := run(t, Options{URL: srv.URL, Connections: 16, Warmup: warmup, WarmupMax: tt.most, Duration: 500 * time.Millisecond})
			if res.WarmedUp < tt.min || res.WarmedUp > tt.max {
				t.Errorf("warm-up took %v; want %v to %v", res.WarmedUp, tt.min, tt.max)
			}
			if d := res.Start.Sub(now); d < res.WarmedUp {
				t.Errorf("measured phase began %v after the start, inside the %v warm-up", d, res.WarmedUp)
			}
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "did not settle") })
			if warned != tt.warned {
				t.Errorf("warnings %q; want a warm-up warning: %v", res.Warnings, tt.warned)
			}
			if tt.name == "cold for 1.4 s" && res.AchievedRate < 1600 {
				// Cold, 16 connections at 48 ms serve 333/s.
				t.Errorf("measured %.0f req/s: the cold start's rate, not the warm server's", res.AchievedRate)
			}
		})
	}
}
