package load

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// http2Conn is one HTTP/2 connection, cleartext with prior knowledge (h2c)
// or TLS with ALPN, carrying one request at a time as a connection of the
// HTTP/1.1 engine does. The protocol is golang.org/x/net/http2's.
type http2Conn struct {
	dial      func(context.Context) (net.Conn, error)
	tr        *http2.Transport
	url       string
	host      string
	method    string
	header    http.Header
	body      []byte
	keepAlive bool
	timeout   time.Duration

	mu     sync.Mutex // guards closed, and cc against abort
	closed bool
	cc     *http2.ClientConn
}

func newHTTP2Conn(d *dialer, t target, o *Options) *http2Conn {
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	host := h.Get("Host")
	h.Del("Host")
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	return &http2Conn{
		dial: d.dial,
		// Compression off: the engine sends what the user asked, as the
		// HTTP/1.1 path does.
		tr:        &http2.Transport{AllowHTTP: true, DisableCompression: true},
		url:       t.url.String(),
		host:      host,
		method:    o.Method,
		header:    h,
		body:      o.Body,
		keepAlive: !o.NoKeepAlive,
		timeout:   o.Timeout,
	}
}

func (c *http2Conn) roundTrip(ctx context.Context, _ time.Time) (int, error) {
	if c.cc == nil || !c.cc.CanTakeNewRequest() {
		if err := c.connect(ctx); err != nil {
			return 0, err
		}
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var body io.Reader
	if len(c.body) > 0 {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return 0, err
	}
	req.Header = c.header
	if c.host != "" {
		req.Host = c.host
	}
	res, err := c.cc.RoundTrip(req)
	if err != nil {
		c.drop()
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		c.drop()
		return 0, err
	}
	if !c.keepAlive {
		c.drop()
	}
	return res.StatusCode, nil
}

func (c *http2Conn) connect(ctx context.Context) error {
	c.drop()
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	cc, err := c.tr.NewClientConn(conn)
	if err != nil {
		conn.Close()
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cc.Close()
		return net.ErrClosed
	}
	c.cc = cc
	return nil
}

func (c *http2Conn) drop() {
	c.mu.Lock()
	cc := c.cc
	c.cc = nil
	c.mu.Unlock()
	if cc != nil {
		cc.Close()
	}
}

func (c *http2Conn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.cc != nil {
		c.cc.Close()
	}
}
