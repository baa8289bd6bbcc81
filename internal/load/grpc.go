package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshbench/meshbench/internal/grpcapp"
)

// grpcConn is one gRPC client connection (one HTTP/2 connection, through
// the engine's dialer) carrying one unary call at a time, as a connection
// of the HTTP engines does. It calls the test service's method
// (grpcapp.Method) with the body as the request's bytes. A call answered
// with a status other than OK is an error whose kind names the code.
type grpcConn struct {
	dial      func(context.Context) (net.Conn, error)
	authority string
	timeout   time.Duration
	req       *wrapperspb.BytesValue
	resp      wrapperspb.BytesValue

	mu     sync.Mutex // guards closed, and cc against abort
	closed bool
	cc     *grpc.ClientConn
}

// grpcStatusError is a call answered with a status other than OK.
type grpcStatusError struct{ code codes.Code }

func (e *grpcStatusError) Error() string { return "gRPC status " + e.code.String() }

// grpcKind is the error kind of a gRPC status: "grpc Unavailable".
func grpcKind(c codes.Code) string { return "grpc " + c.String() }

func newGRPCConn(d *dialer, t target, o *Options) *grpcConn {
	return &grpcConn{
		dial:      d.dial,
		authority: t.authority(o.Header),
		timeout:   o.Timeout,
		req:       &wrapperspb.BytesValue{Value: o.requestBody()},
	}
}

func (c *grpcConn) roundTrip(ctx context.Context, _ time.Time) (int, error) {
	c.mu.Lock()
	cc := c.cc
	c.mu.Unlock()
	if cc == nil {
		if err := c.connect(ctx); err != nil {
			return 0, err
		}
		cc = c.cc
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	err := cc.Invoke(ctx, grpcapp.Method, c.req, &c.resp)
	if err == nil {
		return 200, nil
	}
	st, ok := status.FromError(err)
	switch {
	case !ok:
		return 0, err
	case st.Code() == codes.DeadlineExceeded && ctx.Err() != nil:
		return 0, fmt.Errorf("%w: %s", errTimeout, st.Message())
	}
	return 0, &grpcStatusError{code: st.Code()}
}

// connect opens the connection and waits until it is ready, so that a
// preconnected pool is warm; gRPC reconnects by itself after.
func (c *grpcConn) connect(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	if c.cc == nil {
		opts := []grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return c.dial(ctx) }),
		}
		// The URL's authority, not the placeholder target's name ("target"),
		// which no sidecar routes: it sent every call to its passthrough.
		opts = append(opts, grpc.WithAuthority(c.authority))
		cc, err := grpc.NewClient("passthrough:///target", opts...)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		c.cc = cc
	}
	cc := c.cc
	c.mu.Unlock()
	cc.Connect()
	for {
		switch s := cc.GetState(); s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return errors.New("grpc: connection " + s.String())
		default:
			if !cc.WaitForStateChange(ctx, s) {
				return ctx.Err()
			}
		}
	}
}

func (c *grpcConn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.cc != nil {
		c.cc.Close()
	}
}
