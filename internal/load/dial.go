package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// dialer opens connections to the target, with TLS when the URL says https.
type dialer struct {
	addr    string
	tls     *tls.Config // nil for plain TCP
	timeout time.Duration
	nd      net.Dialer
	// dials counts the connections opened; each worker's dialer has its
	// own (gRPC dials from its own goroutines).
	dials *atomic.Int64
}

func newDialer(t target, o *Options, alpn string) *dialer {
	d := &dialer{addr: t.addr, timeout: o.Timeout, nd: net.Dialer{Timeout: o.Timeout}}
	if t.tls {
		d.tls = &tls.Config{
			ServerName:         t.serverName,
			InsecureSkipVerify: o.Insecure, //nolint:gosec // the user asked for --insecure
			NextProtos:         []string{alpn},
		}
	}
	return d
}

func (d *dialer) dial(ctx context.Context) (net.Conn, error) {
	c, err := d.nd.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	if d.tls == nil {
		d.opened()
		return c, nil
	}
	tc := tls.Client(c, d.tls)
	if d.timeout > 0 {
		_ = c.SetDeadline(time.Now().Add(d.timeout))
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	// HTTP/1.1 may go without ALPN; HTTP/2 over TLS needs the server to
	// choose h2.
	want := d.tls.NextProtos[0]
	if p := tc.ConnectionState().NegotiatedProtocol; p != want && (want == "h2" || p != "") {
		c.Close()
		return nil, fmt.Errorf("tls: server negotiated %q, not %q", p, want)
	}
	d.opened()
	return tc, nil
}

func (d *dialer) opened() {
	if d.dials != nil {
		d.dials.Add(1)
	}
}
