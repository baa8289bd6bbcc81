package load

import (
	"bytes"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// userAgent identifies meshbench in requests that set no User-Agent.
const userAgent = "meshbench"

// target is a parsed URL: where to dial and what to ask for.
type target struct {
	url        *url.URL
	addr       string // host:port to dial
	serverName string // TLS server name
	tls        bool
}

// authority is the request's :authority (HTTP/2, gRPC): the Host header
// when the options set one, else the URL's host. A mesh's sidecar routes
// by it, as it routes HTTP/1.1 by Host.
func (t target) authority(h http.Header) string {
	if v := h.Get("Host"); v != "" {
		return v
	}
	return t.url.Host
}

func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, &OptionError{Field: "url", Problem: "does not parse: " + err.Error()}
	}
	t := target{url: u, serverName: u.Hostname()}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		t.tls = true
		if port == "" {
			port = "443"
		}
	default:
		return target{}, &OptionError{Field: "url", Problem: "must start with http:// or https://"}
	}
	if u.Hostname() == "" {
		return target{}, &OptionError{Field: "url", Problem: "has no host"}
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	return t, nil
}

// http1Request serializes the request once, so that the hot path only
// writes these bytes. Headers are sorted, so that the bytes are the same on
// every run.
func http1Request(o *Options, t target) []byte {
	var b bytes.Buffer
	b.WriteString(o.Method)
	b.WriteByte(' ')
	b.WriteString(t.url.RequestURI())
	b.WriteString(" HTTP/1.1\r\n")
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	host := t.url.Host
	if v := h.Get("Host"); v != "" {
		host = v
		h.Del("Host")
	}
	b.WriteString("Host: " + host + "\r\n")
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	h.Del("Content-Length")
	h.Del("Connection")
	body := o.requestBody()
	if len(body) > 0 || o.Method == http.MethodPost || o.Method == http.MethodPut || o.Method == http.MethodPatch {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if o.NoKeepAlive {
		h.Set("Connection", "close")
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	b.Grow(len(body))
	b.Write(body)
	return b.Bytes()
}
