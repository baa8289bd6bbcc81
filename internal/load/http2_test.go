package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"
)

// h2Peer is the server side of one connection of a scripted HTTP/2
// server: frames in and out, with its own HPACK encoder.
type h2Peer struct {
	t    *testing.T
	conn net.Conn
	fr   *http2.Framer
	buf  bytes.Buffer
	enc  *hpack.Encoder
	n    int // the connection's number, from 1
}

// h2Script serves HTTP/2 with prior knowledge on a loopback port: for each
// connection it reads the client's preface, sends SETTINGS and runs script,
// then closes the connection. It returns the URL and the connection count.
func h2Script(t *testing.T, settings []http2.Setting, script func(p *h2Peer)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer c.Close()
				preface := make([]byte, len(http2.ClientPreface))
				if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
					return
				}
				p := &h2Peer{t: t, conn: c, fr: http2.NewFramer(c, c), n: n}
				p.enc = hpack.NewEncoder(&p.buf)
				if err := p.fr.WriteSettings(settings...); err != nil {
					return
				}
				script(p)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/", &conns
}

// request reads frames until a request has come whole, acknowledging
// SETTINGS, and returns its stream; io.EOF when the client went away.
func (p *h2Peer) request() (uint32, error) {
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			return 0, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := p.fr.WriteSettingsAck(); err != nil {
					return 0, err
				}
			}
		case *http2.HeadersFrame:
			if f.StreamEnded() {
				return f.StreamID, nil
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				return f.StreamID, nil
			}
		}
	}
}

// respond sends a response with status and body, in one HEADERS frame and
// at most one DATA frame.
func (p *h2Peer) respond(id uint32, status int, body string) error {
	p.buf.Reset()
	_ = p.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	_ = p.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
	if err := p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.buf.Bytes(),
		EndHeaders: true, EndStream: body == ""}); err != nil {
		return err
	}
	if body == "" {
		return nil
	}
	return p.fr.WriteData(id, true, []byte(body))
}

// serve answers every request with 200 until the client goes away.
func (p *h2Peer) serve() {
	for {
		id, err := p.request()
		if err != nil || p.respond(id, 200, "ok") != nil {
			return
		}
	}
}

func runH2(t *testing.T, url string, o Options) *Result {
	t.Helper()
	o.URL, o.HTTP2 = url, true
	if o.Connections == 0 {
		o.Connections = 1
	}
	return run(t, o)
}

func TestHTTP2ServerShutdown(t *testing.T) {
	t.Parallel()
	t.Run("GOAWAY after a response: the next request opens a new connection", func(t *testing.T) {
		t.Parallel()
		url, conns := h2Script(t, nil, func(p *h2Peer) {
			id, err := p.request()
			if err != nil || p.respond(id, 200, "ok") != nil {
				return
			}
			_ = p.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
			_, _ = p.request() // until the client closes
		})
		res := runH2(t, url, Options{Requests: 5})
		if res.Errors != 0 || res.StatusCodes[200] != 5 {
			t.Fatalf("errors %v, statuses %v; want 5 OK", res.ErrorKinds, res.StatusCodes)
		}
		if n := conns.Load(); n != 5 {
			t.Errorf("%d connections, want 5 (one per request)", n)
		}
	})
	t.Run("graceful GOAWAY before processing: retried on a new connection", func(t *testing.T) {
		t.Parallel()
		url, conns := h2Script(t, nil, func(p *h2Peer) {
			if p.n == 1 {
				if _, err := p.request(); err == nil {
					_ = p.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
				}
				return
			}
			p.serve()
		})
		res := runH2(t, url, Options{Requests: 3})
		if res.Errors != 0 || res.StatusCodes[200] != 3 {
			t.Fatalf("errors %v, statuses %v; want 3 OK", res.ErrorKinds, res.StatusCodes)
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})
	t.Run("GOAWAY with an error code before processing: an error", func(t *testing.T) {
		t.Parallel()
		url, _ := h2Script(t, nil, func(p *h2Peer) {
			if _, err := p.request(); err == nil {
				_ = p.fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, nil)
			}
		})
		res := runH2(t, url, Options{Requests: 3})
		if res.Errors != 3 || res.ErrorKinds[KindClosed] != 3 {
			t.Fatalf("errors %d %v; want 3 %q", res.Errors, res.ErrorKinds, KindClosed)
		}
	})
	t.Run("connection reset under a request: an error", func(t *testing.T) {
		t.Parallel()
		url, _ := h2Script(t, nil, func(p *h2Peer) {
			if _, err := p.request(); err == nil {
				_ = p.conn.(*net.TCPConn).SetLinger(0) // close sends RST
			}
		})
		res := runH2(t, url, Options{Requests: 3})
		if res.Errors != 3 || res.ErrorKinds[KindReset] != 3 {
			t.Fatalf("errors %d %v; want 3 %q", res.Errors, res.ErrorKinds, KindReset)
		}
	})
}

func TestHTTP2StreamReset(t *testing.T) {
	t.Parallel()
	t.Run("RST_STREAM: an error; the connection carries on", func(t *testing.T) {
		t.Parallel()
		url, conns := h2Script(t, nil, func(p *h2Peer) {
			for i := 0; ; i++ {
				id, err := p.request()
				if err != nil {
					return
				}
				if i%2 == 1 {
					err = p.fr.WriteRSTStream(id, http2.ErrCodeInternal)
				} else {
					err = p.respond(id, 200, "ok")
				}
				if err != nil {
					return
				}
			}
		})
		res := runH2(t, url, Options{Requests: 10})
		if res.StatusCodes[200] != 5 || res.ErrorKinds[KindStreamReset] != 5 {
			t.Fatalf("statuses %v, errors %v; want 5 OK and 5 %q", res.StatusCodes, res.ErrorKinds, KindStreamReset)
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("%d connections, want 1", n)
		}
	})
	t.Run("REFUSED_STREAM: retried", func(t *testing.T) {
		t.Parallel()
		url, _ := h2Script(t, nil, func(p *h2Peer) {
			for i := 0; ; i++ {
				id, err := p.request()
				if err != nil {
					return
				}
				if i%2 == 0 {
					err = p.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
				} else {
					err = p.respond(id, 200, "ok")
				}
				if err != nil {
					return
				}
			}
		})
		res := runH2(t, url, Options{Requests: 4})
		if res.Errors != 0 || res.StatusCodes[200] != 4 {
			t.Fatalf("errors %v, statuses %v; want 4 OK", res.ErrorKinds, res.StatusCodes)
		}
	})
}

// TestHTTP2ControlFrames checks the frames a server may send around a
// response: a PING to answer, new SETTINGS to acknowledge, an interim 103,
// frames of an ended stream, trailers, and a header block split in
// CONTINUATION frames.
func TestHTTP2ControlFrames(t *testing.T) {
	t.Parallel()
	var pinged, settled atomic.Int64
	url, _ := h2Script(t, nil, func(p *h2Peer) {
		// One reader takes every frame as it comes: the acknowledgements of
		// the PING and SETTINGS may arrive before or after the client's next
		// request, in whatever order its writes interleave.
		for {
			f, err := p.fr.ReadFrame()
			if err != nil {
				return
			}
			var id uint32
			switch f := f.(type) {
			case *http2.PingFrame:
				if f.IsAck() && f.Data == [8]byte{1, 2, 3} {
					pinged.Add(1)
				}
			case *http2.SettingsFrame:
				if f.IsAck() {
					settled.Add(1)
				} else if p.fr.WriteSettingsAck() != nil {
					return
				}
			case *http2.HeadersFrame:
				if f.StreamEnded() {
					id = f.StreamID
				}
			case *http2.DataFrame:
				if f.StreamEnded() {
					id = f.StreamID
				}
			}
			if id == 0 {
				continue
			}
			_ = p.fr.WritePing(false, [8]byte{1, 2, 3})
			_ = p.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20})
			p.buf.Reset()
			_ = p.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "103"})
			_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.buf.Bytes(), EndHeaders: true})
			if id > 1 {
				// Late data and a reset for the previous, ended stream.
				_ = p.fr.WriteData(id-2, false, []byte("late"))
				_ = p.fr.WriteRSTStream(id-2, http2.ErrCodeCancel)
			}
			p.buf.Reset()
			_ = p.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "201"})
			_ = p.enc.WriteField(hpack.HeaderField{Name: "x-padding", Value: string(bytes.Repeat([]byte("p"), 100))})
			block := p.buf.Bytes()
			_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:1]})
			_ = p.fr.WriteContinuation(id, true, block[1:])
			_ = p.fr.WriteData(id, false, []byte("body"))
			p.buf.Reset()
			_ = p.enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
			_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.buf.Bytes(), EndHeaders: true, EndStream: true})
		}
	})
	res := runH2(t, url, Options{Requests: 20})
	if res.Errors != 0 || res.StatusCodes[201] != 20 {
		t.Fatalf("errors %v, statuses %v; want 20×201", res.ErrorKinds, res.StatusCodes)
	}
	// The last request's acknowledgements may go unsent: the client
	// closes the connection when the run ends.
	if pinged.Load() < 19 || settled.Load() < 19 {
		t.Errorf("%d PINGs and %d SETTINGS acknowledged, want 19 or 20", pinged.Load(), settled.Load())
	}
}

func TestHTTP2ProtocolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings []http2.Setting
		script   func(p *h2Peer)
	}{
		{name: "no streams allowed", settings: []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 0}},
			script: func(p *h2Peer) { _, _ = p.request() }},
		{name: "response without :status", script: func(p *h2Peer) {
			id, err := p.request()
			if err == nil {
				p.buf.Reset()
				_ = p.enc.WriteField(hpack.HeaderField{Name: "server", Value: "x"})
				_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.buf.Bytes(), EndHeaders: true, EndStream: true})
				_, _ = p.request()
			}
		}},
		{name: "DATA before HEADERS", script: func(p *h2Peer) {
			id, err := p.request()
			if err == nil {
				_ = p.fr.WriteData(id, true, []byte("x"))
				_, _ = p.request()
			}
		}},
		{name: "garbage header block", script: func(p *h2Peer) {
			id, err := p.request()
			if err == nil {
				_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff}, EndHeaders: true, EndStream: true})
				_, _ = p.request()
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, _ := h2Script(t, tt.settings, tt.script)
			res := runH2(t, url, Options{Requests: 2})
			if res.Errors != 2 || res.ErrorKinds[KindProtocol] != 2 {
				t.Fatalf("errors %d %v; want 2 %q", res.Errors, res.ErrorKinds, KindProtocol)
			}
		})
	}
}

// TestHTTP2FlowControl sends and receives bodies far larger than the
// windows on both sides, so that the client waits for the server's
// WINDOW_UPDATEs as it sends and returns window as it receives.
func TestHTTP2FlowControl(t *testing.T) {
	t.Parallel()
	const up, down = 1 << 20, 3 << 20
	var bad atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil || n != up {
			bad.Add(1)
		}
		_, _ = w.Write(bytes.Repeat([]byte("d"), down))
	}))
	srv.Config.Handler = h2c.NewHandler(srv.Config.Handler, &http2.Server{
		MaxUploadBufferPerConnection: 65535, MaxUploadBufferPerStream: 65535})
	srv.Start()
	t.Cleanup(srv.Close)
	o := Options{URL: srv.URL, Method: http.MethodPost, Body: bytes.Repeat([]byte("u"), up), HTTP2: true, Connections: 1, Requests: 3, Timeout: 10 * time.Second}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	tg, err := parseTarget(o.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := newHTTP2Conn(newDialer(tg, &o, "h2"), tg, &o)
	c.window = defaultWindow // the least a client may offer
	defer c.abort()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		status, err := c.roundTrip(ctx, time.Now())
		if err != nil || status != 200 {
			t.Fatalf("request %d: status %d, %v", i, status, err)
		}
	}
	if bad.Load() != 0 {
		t.Errorf("%d request bodies arrived short", bad.Load())
	}
}

// TestHTTP2MaxConcurrentStreams runs against a server that allows one
// stream per connection and refuses any more: one request at a time per
// connection never opens a second.
func TestHTTP2MaxConcurrentStreams(t *testing.T) {
	t.Parallel()
	var open, most atomic.Int64
	srv := newCountingServer(t, func(http.ResponseWriter, *http.Request) {
		n := open.Add(1)
		defer open.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
	}, func(s *httptest.Server) {
		s.Config.Handler = h2c.NewHandler(s.Config.Handler, &http2.Server{MaxConcurrentStreams: 1})
		s.Start()
	})
	res := runH2(t, srv.URL, Options{Requests: 200})
	if res.Errors != 0 || res.StatusCodes[200] != 200 {
		t.Fatalf("errors %v, statuses %v; want 200 OK", res.ErrorKinds, res.StatusCodes)
	}
	if most.Load() != 1 {
		t.Errorf("at most %d streams open at once, want 1", most.Load())
	}
}

func TestHTTP2HeaderBlockIsStateless(t *testing.T) {
	o := Options{URL: "http://example.test:8080/p?q=1", Method: http.MethodPost, Body: []byte("xyz"),
		Header: http.Header{"Host": {"svc"}, "X-A": {"1", "2"}, "Connection": {"close"}}, Connections: 1, Requests: 1}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	tg, err := parseTarget(o.URL)
	if err != nil {
		t.Fatal(err)
	}
	block := http2HeaderBlock(&o, tg)
	// Two decoders with different histories read the same fields: the
	// block never refers to the dynamic table, nor changes it.
	fresh := hpack.NewDecoder(4096, nil)
	used := hpack.NewDecoder(4096, nil)
	enc := new(bytes.Buffer)
	e := hpack.NewEncoder(enc)
	_ = e.WriteField(hpack.HeaderField{Name: "x-old", Value: "v"})
	if _, err := used.DecodeFull(enc.Bytes()); err != nil {
		t.Fatal(err)
	}
	a, err := fresh.DecodeFull(block)
	if err != nil {
		t.Fatal(err)
	}
	b, err := used.DecodeFull(block)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(a)
	if got != fmt.Sprint(b) {
		t.Errorf("decoded differently: %v and %v", a, b)
	}
	want := `[header field ":method" = "POST" header field ":scheme" = "http" header field ":authority" = "svc" header field ":path" = "/p?q=1" ` +
		`header field "content-length" = "3" header field "user-agent" = "meshbench" header field "x-a" = "1" header field "x-a" = "2"]`
	if got != want {
		t.Errorf("fields\n%s\nwant\n%s", got, want)
	}
}
