package load

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/meshbench/meshbench/internal/grpcapp"
)

// grpcServer serves the test service's method by r on loopback and counts
// calls, connections and the :authority it saw.
type grpcServer struct {
	addr      string
	calls     atomic.Int64
	conns     atomic.Int64
	authority atomic.Value
}

// connCounter counts the server's connections.
type connCounter struct{ n *atomic.Int64 }

func (c connCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (c connCounter) HandleRPC(context.Context, stats.RPCStats)                       {}
func (c connCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	c.n.Add(1)
	return ctx
}
func (c connCounter) HandleConn(context.Context, stats.ConnStats) {}

func newGRPCServer(t *testing.T, status func(call int64) int) *grpcServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := &grpcServer{addr: ln.Addr().String()}
	s := grpc.NewServer(grpc.StatsHandler(connCounter{&gs.conns}))
	grpcapp.Register(s, func(ctx context.Context) ([]byte, int) {
		n := gs.calls.Add(1)
		if md, ok := metadata.FromIncomingContext(ctx); ok && len(md[":authority"]) > 0 {
			gs.authority.Store(md[":authority"][0])
		}
		if status != nil {
			return []byte("no"), status(n)
		}
		return []byte(`{"service":"x"}`), http.StatusOK
	})
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return gs
}

func TestRunGRPC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want int64
	}{
		{name: "closed loop", o: Options{Connections: 4, Requests: 400}, want: 400},
		{name: "open loop", o: Options{Connections: 4, Rate: 400, Duration: 500 * time.Millisecond}, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newGRPCServer(t, nil)
			o := tt.o
			o.URL, o.GRPC = "http://"+srv.addr+"/", true
			o.Header = http.Header{"Host": {"svc:7070"}}
			res := run(t, o)
			if res.Requests != tt.want || res.StatusCodes[200] != tt.want || len(res.ErrorKinds) != 0 {
				t.Errorf("requests %d, codes %v, errors %v; want %d OK", res.Requests, res.StatusCodes, res.ErrorKinds, tt.want)
			}
			if res.Latency.Count() != tt.want || res.ByClass["2xx"] == nil {
				t.Errorf("latency samples %d, classes %v", res.Latency.Count(), res.ByClass)
			}
			if o.Rate > 0 && (res.Uncorrected.Count() != tt.want || res.SendLag.Count() != tt.want) {
				t.Errorf("open loop: uncorrected %d, send lag %d samples", res.Uncorrected.Count(), res.SendLag.Count())
			}
			// One HTTP/2 connection per engine connection, preconnected.
			if got := srv.conns.Load(); got != 4 {
				t.Errorf("%d connections, want 4", got)
			}
			if got := srv.authority.Load(); got != "svc:7070" {
				t.Errorf(":authority %v, want the Host header's svc:7070", got)
			}
		})
	}
}

// Without a Host header the :authority is the URL's host, as HTTP/2's is:
// a sidecar routes by it, and routed grpc-go's placeholder target name
// ("target") to its passthrough, which failed every call under sidecar.
func TestGRPCAuthorityIsTheURLsHost(t *testing.T) {
	t.Parallel()
	srv := newGRPCServer(t, nil)
	res := run(t, Options{URL: "http://" + srv.addr + "/", GRPC: true, Connections: 1, Requests: 3})
	if res.Requests != 3 || len(res.ErrorKinds) != 0 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.ErrorKinds)
	}
	if got := srv.authority.Load(); got != srv.addr {
		t.Errorf(":authority %v, want the URL's host %s", got, srv.addr)
	}
}

func TestRunGRPCStatusKinds(t *testing.T) {
	t.Parallel()
	// Every third call fails as the test service fails; one in 7 is denied
	// as a mesh's policy would.
	srv := newGRPCServer(t, func(n int64) int {
		switch {
		case n%7 == 0:
			return http.StatusForbidden
		case n%3 == 0:
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	res := run(t, Options{URL: "http://" + srv.addr, GRPC: true, Connections: 1, Requests: 210})
	want := map[string]int64{"grpc Unavailable": 60, "grpc PermissionDenied": 30}
	if res.Errors != 90 || res.ErrorKinds["grpc Unavailable"] != want["grpc Unavailable"] || res.ErrorKinds["grpc PermissionDenied"] != want["grpc PermissionDenied"] {
		t.Errorf("errors %d by kind %v, want %v", res.Errors, res.ErrorKinds, want)
	}
	if res.StatusCodes[200] != 120 {
		t.Errorf("status codes %v, want 120 OK", res.StatusCodes)
	}
}

func TestGRPCOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{URL: "http://127.0.0.1:1", GRPC: true, NoKeepAlive: true, Connections: 1, Requests: 1},
		{URL: "http://127.0.0.1:1", GRPC: true, HTTP2: true, Connections: 1, Requests: 1},
	} {
		if _, err := Run(context.Background(), o, nil); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
