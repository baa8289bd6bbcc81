package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/http1wire"
)

const (
	dialTimeout = 5 * time.Second
	// maxIdlePerDownstream bounds the idle connections kept per downstream.
	maxIdlePerDownstream = 256
)

// http1Downstream calls one address over HTTP/1.1 keep-alive connections,
// reusing the most recently idle one. It is a minimal client (GET, no
// redirects, no proxies) because net/http's Transport costs several
// goroutine hand-offs per request.
type http1Downstream struct {
	addr   string
	req    []byte // the request, rendered once
	dialer net.Dialer

	mu   sync.Mutex
	idle []*clientConn
}

type clientConn struct {
	c  net.Conn
	br *bufio.Reader
}

func newHTTP1Downstream(addr, host string) *http1Downstream {
	return &http1Downstream{
		addr:   addr,
		req:    []byte("GET / HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: meshbench-app\r\nAccept: application/json\r\n\r\n"),
		dialer: net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second},
	}
}

// aLongTimeAgo is a deadline in the past: it wakes a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

func (d *http1Downstream) get(ctx context.Context, timeout time.Duration, dst []byte) (int, bool, []byte, error) {
	deadline := time.Now().Add(timeout)
	for attempt := 0; ; attempt++ {
		cc, reused := d.take()
		if cc == nil {
			dctx, cancel := context.WithDeadline(ctx, deadline)
			c, err := d.dialer.DialContext(dctx, "tcp", d.addr)
			cancel()
			if err != nil {
				return 0, false, dst, classify(ctx, err)
			}
			cc = &clientConn{c: c, br: bufio.NewReaderSize(c, 4<<10)}
		}
		cc.c.SetDeadline(deadline)
		stop := context.AfterFunc(ctx, func() { cc.c.SetDeadline(aLongTimeAgo) })
		status, isJSON, body, keep, started, err := cc.roundTrip(d.req, dst)
		if !stop() {
			err, keep = ctx.Err(), false
		}
		if err == nil {
			if keep {
				d.put(cc)
			} else {
				cc.c.Close()
			}
			return status, isJSON, body, nil
		}
		cc.c.Close()
		// A reused connection the server had already closed fails before
		// any answer: GET is idempotent, so try once more on a new one.
		// Whatever closed it (a server restart, a mesh's capture change
		// resetting the pod's connections) has most likely closed the
		// other idle ones too, and this client, unlike net/http, has no
		// reader watching idle connections: drop them all, so that the
		// retry dials and later calls do not meet the dead ones in turn.
		if reused && !started && attempt == 0 && ctx.Err() == nil && time.Now().Before(deadline) {
			d.closeIdle()
			continue
		}
		return 0, false, dst, classify(ctx, err)
	}
}

// classify marks an error past the call's own deadline as a timeout.
func classify(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())) {
		return fmt.Errorf("%w: %w", errCallTimeout, err)
	}
	return err
}

func (d *http1Downstream) take() (*clientConn, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.idle); n > 0 {
		cc := d.idle[n-1]
		d.idle = d.idle[:n-1]
		return cc, true
	}
	return nil, false
}

func (d *http1Downstream) put(cc *clientConn) {
	d.mu.Lock()
	if len(d.idle) < maxIdlePerDownstream {
		d.idle = append(d.idle, cc)
		cc = nil
	}
	d.mu.Unlock()
	if cc != nil {
		cc.c.Close()
	}
}

func (d *http1Downstream) closeIdle() {
	d.mu.Lock()
	idle := d.idle
	d.idle = nil
	d.mu.Unlock()
	for _, cc := range idle {
		cc.c.Close()
	}
}

// roundTrip writes req and reads one answer into dst. started reports that
// some of the answer arrived; keep, that the connection can be reused.
func (cc *clientConn) roundTrip(req, dst []byte) (status int, isJSON bool, body []byte, keep, started bool, err error) {
	if _, err := cc.c.Write(req); err != nil {
		return 0, false, dst, false, false, err
	}
	// Peek waits for the first byte: an error before it means the server
	// closed or reset the connection without answering.
	if _, err := cc.br.Peek(1); err != nil {
		return 0, false, dst, false, false, err
	}
	for {
		h, err := http1wire.ReadResponseHead(cc.br)
		if err != nil {
			return 0, false, dst, false, true, fmt.Errorf("reading the answer: %w", err)
		}
		if h.Status >= 100 && h.Status < 200 {
			continue // an interim answer such as 100 Continue; the real one follows
		}
		body, err = http1wire.ReadBody(cc.br, h, dst, maxBody)
		return h.Status, h.JSON, body, h.KeepAlive && err == nil, true, err
	}
}
