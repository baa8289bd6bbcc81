package load

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/meshbench/meshbench/internal/testenv"
)

func TestRunErrorKinds(t *testing.T) {
	t.Parallel()
	refused := "http://" + testenv.RefusedAddr(t)

	stall := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}
	slow := newCountingServer(t, stall, nil)
	slowH2C := newCountingServer(t, stall, func(s *httptest.Server) {
		s.Config.Handler = h2c.NewHandler(s.Config.Handler, &http2.Server{})
		s.Start()
	})

	tests := []struct {
		name string
		opts Options
		kind string
	}{
		{name: "connection refused", opts: Options{URL: refused, Requests: 5}, kind: KindRefused},
		{name: "timeout", opts: Options{URL: slow.URL, Requests: 2, Timeout: 100 * time.Millisecond}, kind: KindTimeout},
		{name: "h2c timeout", opts: Options{URL: slowH2C.URL, Requests: 2, Timeout: 100 * time.Millisecond, HTTP2: true}, kind: KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := tt.opts
			o.Connections = 1
			res := run(t, o)
			if res.Errors != o.Requests || res.ErrorKinds[tt.kind] != o.Requests {
				t.Fatalf("errors %d by kind %v; want %d %q", res.Errors, res.ErrorKinds, o.Requests, tt.kind)
			}
			if res.ByClass["error"].Count() != o.Requests {
				t.Errorf("error histogram holds %d", res.ByClass["error"].Count())
			}
			if tt.kind == KindTimeout {
				if max := res.ByClass["error"].Max(); max < o.Timeout || max > 2*o.Timeout {
					t.Errorf("timed-out requests took up to %v with a %v timeout", max, o.Timeout)
				}
			}
		})
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  Options
		field string
	}{
		{name: "no scheme", opts: Options{URL: "localhost:80", Connections: 1, Requests: 1}, field: "url"},
		{name: "no connections", opts: Options{URL: "http://x", Requests: 1}, field: "connections"},
		{name: "negative rate", opts: Options{URL: "http://x", Connections: 1, Requests: 1, Rate: -1}, field: "rate"},
		{name: "unbounded", opts: Options{URL: "http://x", Connections: 1}, field: "duration"},
		{name: "bad header", opts: Options{URL: "http://x", Connections: 1, Requests: 1, Header: http.Header{"X": {"a\r\nb"}}}, field: "header"},
		{name: "bad method", opts: Options{URL: "http://x", Connections: 1, Requests: 1, Method: "GE T"}, field: "method"},
		{name: "negative conn-requests", opts: Options{URL: "http://x", Connections: 1, Requests: 1, ConnRequests: -1}, field: "conn-requests"},
		{name: "conn-requests with HTTP/2", opts: Options{URL: "http://x", Connections: 1, Requests: 1, ConnRequests: 2, HTTP2: true}, field: "conn-requests"},
		{name: "warmup-max in an open loop", opts: Options{URL: "http://x", Connections: 1, Requests: 1, Rate: 10, Warmup: time.Second, WarmupMax: 2 * time.Second}, field: "warmup-max"},
		{name: "warmup-max without a warm-up", opts: Options{URL: "http://x", Connections: 1, Requests: 1, WarmupMax: 2 * time.Second}, field: "warmup-max"},
		{name: "warmup-max below the warm-up", opts: Options{URL: "http://x", Connections: 1, Requests: 1, Warmup: 3 * time.Second, WarmupMax: 2 * time.Second}, field: "warmup-max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.opts, nil)
			oe, ok := err.(*OptionError)
			if !ok || oe.Field != tt.field {
				t.Fatalf("error %v, want an OptionError for %q", err, tt.field)
			}
		})
	}
}

// TestRunTLSVerifies: without --insecure an unknown CA fails as a TLS error.
func TestRunTLSVerifies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	res := run(t, Options{URL: srv.URL, Connections: 1, Requests: 2})
	if res.ErrorKinds[KindTLS] != 2 {
		t.Errorf("error kinds %v, want 2 %q", res.ErrorKinds, KindTLS)
	}
}

// TestRunStopsWhileRefused: connections refused at once fail request
// after request without waiting; the run still stops when cancelled.
func TestRunStopsWhileRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Options{URL: "http://" + testenv.RefusedAddr(t), Connections: 2, Duration: time.Minute}, nil)
	if err == nil || res == nil {
		t.Fatalf("Run = %v, %v; want a partial result and the context's error", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %v to stop after a 200 ms cancel", took)
	}
	if res.Errors == 0 || res.ErrorKinds[KindRefused] != res.Errors {
		t.Errorf("errors %d by kind %v; want all refused", res.Errors, res.ErrorKinds)
	}
}
