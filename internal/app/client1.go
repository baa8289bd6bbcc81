package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
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
	for {
		line, err := cc.br.ReadSlice('\n')
		if err != nil {
			return 0, false, dst, false, len(line) > 0, err
		}
		started = true
		// HTTP/1.x SP 3DIGIT SP reason
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, false, dst, false, true, fmt.Errorf("malformed status line %q", trimCRLF(line))
		}
		status, err = strconv.Atoi(string(line[9:12]))
		if err != nil {
			return 0, false, dst, false, true, fmt.Errorf("malformed status line %q", trimCRLF(line))
		}
		keep = line[7] == '1' // HTTP/1.1 keeps the connection by default
		h, err := readResponseHeaders(cc.br, keep)
		if err != nil {
			return 0, false, dst, false, true, err
		}
		if status >= 100 && status < 200 {
			continue // an interim answer such as 100 Continue; the real one follows
		}
		body, err = readBody(cc.br, h, status, dst)
		return status, h.isJSON, body, h.keepAlive && err == nil, true, err
	}
}

type responseHead struct {
	length    int64 // -1: none given
	chunked   bool
	keepAlive bool
	isJSON    bool
}

func readResponseHeaders(br *bufio.Reader, keepAlive bool) (responseHead, error) {
	h := responseHead{length: -1, keepAlive: keepAlive}
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if err != nil {
			return h, fmt.Errorf("reading answer headers: %w", err)
		}
		if total > maxHeaderBytes {
			return h, errors.New("answer headers too large")
		}
		line = trimCRLF(line)
		if len(line) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return h, fmt.Errorf("malformed answer header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if h.length, err = strconv.ParseInt(string(value), 10, 64); err != nil || h.length < 0 {
				return h, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			h.chunked = hasToken(value, "chunked")
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				h.keepAlive = false
			} else if hasToken(value, "keep-alive") {
				h.keepAlive = true
			}
		case bytes.EqualFold(name, []byte("Content-Type")):
			h.isJSON = bytes.HasPrefix(value, []byte("application/json"))
		}
	}
}

// readBody reads an answer's body into dst, bounded by maxBody.
func readBody(br *bufio.Reader, h responseHead, status int, dst []byte) ([]byte, error) {
	switch {
	case status == 204 || status == 304:
		return dst, nil
	case h.chunked:
		return readChunked(br, dst)
	case h.length >= 0:
		if h.length > maxBody {
			return dst, fmt.Errorf("answer of %d bytes is over the %d limit", h.length, maxBody)
		}
		n := len(dst)
		dst = append(dst, make([]byte, h.length)...)
		_, err := io.ReadFull(br, dst[n:])
		return dst, err
	default: // the body runs to the end of the connection
		return readAll(br, dst, -1)
	}
}

func readChunked(br *bufio.Reader, dst []byte) ([]byte, error) {
	err := readChunks(br, func(n int64) error {
		if int64(len(dst))+n > maxBody {
			return fmt.Errorf("answer is over the %d-byte limit", maxBody)
		}
		m := len(dst)
		dst = append(dst, make([]byte, n)...)
		_, err := io.ReadFull(br, dst[m:])
		return err
	})
	return dst, err
}
