package load

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/meshbench/meshbench/internal/http1wire"
)

// readBufferSize is the response read buffer of each connection; a status
// or header line longer than this is a protocol error.
const readBufferSize = 32 << 10

// http1Conn is one HTTP/1.1 client connection over TLS, driven by a
// worker (plain TCP goes to a loop): the request is serialized once, the
// response parsed in place and its body discarded. It reconnects as needed.
type http1Conn struct {
	dial      func(context.Context) (net.Conn, error)
	req       []byte
	head      bool
	keepAlive bool
	connReqs  int // requests a connection carries; 0: no limit
	carried   int // responses the open connection carried
	deadline  ioDeadline

	mu     sync.Mutex // guards closed, and conn against abort
	closed bool
	conn   net.Conn
	br     *bufio.Reader
}

func newHTTP1Conn(d *dialer, req []byte, o *Options) *http1Conn {
	return &http1Conn{
		dial:      d.dial,
		req:       req,
		head:      o.Method == "HEAD",
		keepAlive: !o.NoKeepAlive,
		connReqs:  o.ConnRequests,
		deadline:  ioDeadline{timeout: o.Timeout},
		br:        bufio.NewReaderSize(nil, readBufferSize),
	}
}

func (c *http1Conn) roundTrip(ctx context.Context, now time.Time) (int, error) {
	for retry := true; ; retry = false {
		reused := c.conn != nil
		if !reused {
			if err := c.connect(ctx); err != nil {
				return 0, err
			}
		}
		status, keep, err := c.exchange(now)
		if err == nil {
			// Bytes past the response mean the stream is out of step.
			c.carried++
			if !keep || !c.keepAlive || c.br.Buffered() > 0 || c.connReqs > 0 && c.carried >= c.connReqs {
				c.drop()
			}
			return status, nil
		}
		c.drop()
		// A server may close an idle keep-alive connection just as a request
		// goes out. Like net/http, try once more on a fresh connection when
		// nothing at all came back.
		if !reused || !retry || !noResponse(err) {
			return 0, err
		}
	}
}

func noResponse(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (c *http1Conn) exchange(now time.Time) (status int, keep bool, err error) {
	if err := c.deadline.extend(c.conn, now); err != nil {
		return 0, false, err
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, false, err
	}
	return http1wire.DiscardResponse(c.br, c.head)
}

// ioDeadline is a connection's I/O deadline, moved forward lazily.
type ioDeadline struct {
	at      time.Time
	timeout time.Duration
}

// extend keeps the connection's deadline at least one timeout ahead of
// now. Setting a deadline per request costs a runtime timer update each
// time, so it moves in steps of an eighth of the timeout: a stuck request
// fails between one and 1.125 timeouts after it was sent, and the engine
// counts any request that took longer than the timeout as timed out.
func (d *ioDeadline) extend(conn net.Conn, now time.Time) error {
	if d.timeout <= 0 || d.at.Sub(now) >= d.timeout {
		return nil
	}
	d.at = now.Add(d.timeout + d.timeout/8)
	return conn.SetDeadline(d.at)
}

func (c *http1Conn) connect(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		conn.Close()
		return net.ErrClosed
	}
	c.conn = conn
	c.mu.Unlock()
	c.carried = 0
	c.deadline.at = time.Time{}
	c.br.Reset(conn)
	return nil
}

// drop closes the current connection; the next request dials a new one.
func (c *http1Conn) drop() {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// abort closes the connection from another goroutine, to unblock a request
// in flight when the run is cancelled, and keeps it from reconnecting.
func (c *http1Conn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
	}
}
