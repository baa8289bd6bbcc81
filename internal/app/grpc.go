package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshbench/meshbench/internal/grpcapp"
)

// newGRPCServer serves the service's answer as the one gRPC method. It
// runs behind the h2c server (see server.ServeHTTP), so that one port
// serves HTTP/1.1, h2c and gRPC as one Kubernetes Service port does.
func newGRPCServer(s *server) *grpc.Server {
	g := grpc.NewServer()
	grpcapp.Register(g, func(ctx context.Context) ([]byte, int) {
		// gRPC encodes the answer after the handler returns, so the
		// buffer cannot go back to the pool.
		s.answered.Add(1)
		return s.r.respond(ctx, nil)
	})
	return g
}

// isGRPC reports whether an HTTP/2 request is a gRPC call.
func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// grpcDownstream calls a service's gRPC method over one HTTP/2 connection
// that multiplexes every call, as a gRPC client with pick_first does: the
// mesh, not the client, balances.
type grpcDownstream struct {
	target    string
	authority string

	mu sync.Mutex
	cc *grpc.ClientConn // nil until first used, and after closeIdle
}

func newGRPCDownstream(addr, authority string) *grpcDownstream {
	// passthrough: dial the address as given, no client-side resolution.
	return &grpcDownstream{target: "passthrough:///" + addr, authority: authority}
}

func (d *grpcDownstream) conn() (*grpc.ClientConn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cc == nil {
		cc, err := grpc.NewClient(d.target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithAuthority(d.authority),
			grpc.WithContextDialer(dialGRPC),
		)
		if err != nil {
			return nil, err
		}
		d.cc = cc
	}
	return d.cc, nil
}

// dialGRPC dials as the HTTP clients do: a bounded connect, no proxy.
func dialGRPC(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

func (d *grpcDownstream) get(ctx context.Context, timeout time.Duration, dst []byte) (int, bool, []byte, error) {
	cc, err := d.conn()
	if err != nil {
		return 0, false, dst, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := new(wrapperspb.BytesValue)
	err = cc.Invoke(cctx, grpcapp.Method, &wrapperspb.BytesValue{}, out)
	if err == nil {
		return http.StatusOK, true, append(dst, out.Value...), nil
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return 0, false, dst, fmt.Errorf("%w: %w", errCallTimeout, err)
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.Canceled {
		return 0, false, dst, err
	}
	// The service's own failure carries its call tree as the message; a
	// mesh's or the transport's carries text.
	msg := st.Message()
	if strings.HasPrefix(msg, "{") {
		return grpcapp.HTTPStatus(st.Code()), true, append(dst, msg...), nil
	}
	return grpcapp.HTTPStatus(st.Code()), false, append(dst, "gRPC "+st.Code().String()+": "+msg...), nil
}

func (d *grpcDownstream) closeIdle() {
	d.mu.Lock()
	cc := d.cc
	d.cc = nil
	d.mu.Unlock()
	if cc != nil {
		cc.Close()
	}
}
