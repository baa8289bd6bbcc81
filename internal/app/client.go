package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/topology"
)

// downstream calls one downstream service.
type downstream interface {
	// get makes one GET / within timeout and appends the answer's body to
	// dst. isJSON reports an application/json answer. A timeout returns an
	// error wrapping errCallTimeout.
	get(ctx context.Context, timeout time.Duration, dst []byte) (status int, isJSON bool, body []byte, err error)
	// closeIdle closes the idle connections kept for reuse.
	closeIdle()
}

var errCallTimeout = errors.New("call timed out")

// maxBody bounds a downstream answer read into memory; a graph whose
// called service would answer more is refused when it is read.
const maxBody = topology.MaxDownstreamAnswer

// newDownstreams returns a client per edge of the service, at the given
// addresses: HTTP/1.1, h2c through the shared client h2c, or gRPC. With
// forceH2C, http edges go out as h2c too. Requests carry Host (or
// :authority) "<name>:<port>", the Kubernetes Service's own name, so that a
// mesh routes them as that service's traffic whatever address they are
// sent to.
func newDownstreams(g *topology.Graph, service string, addrs map[string]string, h2c *http.Client, forceH2C bool) map[topology.Edge]downstream {
	out := map[topology.Edge]downstream{}
	for _, e := range g.Edges(service) {
		name := e.Service
		host := net.JoinHostPort(name, strconv.Itoa(g.Service(name).Port))
		switch {
		case e.Protocol == topology.ProtocolGRPC:
			out[e] = newGRPCDownstream(addrs[name], host)
		case e.Protocol == topology.ProtocolH2C || forceH2C:
			out[e] = &h2cDownstream{client: h2c, url: "http://" + addrs[name] + "/", host: host}
		default:
			out[e] = newHTTP1Downstream(addrs[name], host)
		}
	}
	return out
}

// newH2CClient returns the client for downstream calls over HTTP/2 with
// prior knowledge; its connections multiplex all calls to one address.
func newH2CClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:          p,
		DialContext:        (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		IdleConnTimeout:    90 * time.Second,
		DisableCompression: true,
		Proxy:              nil, // a mesh intercepts transparently; never an HTTP proxy from the environment
	}}
}

// h2cDownstream calls a service through net/http's HTTP/2 client.
type h2cDownstream struct {
	client *http.Client
	url    string
	host   string
}

func (d *h2cDownstream) get(ctx context.Context, timeout time.Duration, dst []byte) (int, bool, []byte, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, d.url, nil)
	if err != nil {
		return 0, false, dst, err
	}
	req.Host = d.host
	resp, err := d.client.Do(req)
	if err == nil {
		defer resp.Body.Close()
		dst, err = readAll(resp.Body, dst, resp.ContentLength)
	}
	if err != nil {
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", errCallTimeout, err)
		}
		return 0, false, dst, err
	}
	return resp.StatusCode, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"), dst, nil
}

func (d *h2cDownstream) closeIdle() { d.client.CloseIdleConnections() }

// readAll reads r into buf, sized from the Content-Length when known.
func readAll(r io.Reader, buf []byte, n int64) ([]byte, error) {
	if n > 0 && n <= maxBody && int64(cap(buf)) < n+1 {
		buf = make([]byte, 0, n+1)
	}
	r = io.LimitReader(r, maxBody)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
