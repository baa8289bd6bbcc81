package load

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// scriptedConn is a connection whose server side says data and then
// closes; what the client writes is dropped.
type scriptedConn struct {
	net.Conn // nil: only the methods below are called
	r        *bytes.Reader
}

func (c *scriptedConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *scriptedConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *scriptedConn) Close() error                { return nil }
func (c *scriptedConn) SetDeadline(time.Time) error { return nil }

// FuzzHTTP2Response feeds the HTTP/2 client arbitrary server bytes, after
// its connection preface: whatever they are, requests end, with a status
// from 100 to 999 or an error, and nothing panics.
func FuzzHTTP2Response(f *testing.F) {
	for _, seed := range http2FuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := Options{URL: "http://fuzz.test/", HTTP2: true, Connections: 1, Requests: 1, Body: []byte("hello")}
		if err := o.normalize(); err != nil {
			t.Fatal(err)
		}
		tg, err := parseTarget(o.URL)
		if err != nil {
			t.Fatal(err)
		}
		c := newHTTP2Conn(&dialer{}, tg, &o)
		conn := &scriptedConn{r: bytes.NewReader(data)}
		dialed := false
		c.dial = func(context.Context) (net.Conn, error) {
			if dialed {
				return nil, net.ErrClosed
			}
			dialed = true
			return conn, nil
		}
		for range 3 {
			status, err := c.roundTrip(context.Background(), time.Now())
			if err == nil && (status < 100 || status > 999) {
				t.Fatalf("status %d without an error", status)
			}
		}
	})
}

// http2FuzzSeeds are server byte streams: SETTINGS, then answers in
// various shapes.
func http2FuzzSeeds() [][]byte {
	var seeds [][]byte
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	block := func(fields ...string) []byte {
		hb.Reset()
		for i := 0; i < len(fields); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return bytes.Clone(hb.Bytes())
	}
	for _, script := range []func(fr *http2.Framer){
		func(fr *http2.Framer) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200", "server", "x"), EndHeaders: true})
			_ = fr.WriteData(1, true, []byte("body"))
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block(":status", "404"), EndHeaders: true, EndStream: true})
		},
		func(fr *http2.Framer) {
			_ = fr.WriteWindowUpdate(0, 100)
			_ = fr.WritePing(false, [8]byte{1})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "100"), EndHeaders: true})
			b := block(":status", "503", "x-long", "vvvvvvvvvvvvvvvvvvvv")
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:2]})
			_ = fr.WriteContinuation(1, true, b[2:])
			_ = fr.WriteDataPadded(1, false, []byte("abc"), []byte{0, 0})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block("grpc-status", "0"), EndHeaders: true, EndStream: true})
		},
		func(fr *http2.Framer) {
			_ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream)
			_ = fr.WriteRSTStream(3, http2.ErrCodeInternal)
			_ = fr.WriteGoAway(3, http2.ErrCodeNo, []byte("bye"))
		},
	} {
		var b bytes.Buffer
		fr := http2.NewFramer(&b, nil)
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 15}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 3})
		_ = fr.WriteSettingsAck()
		script(fr)
		seeds = append(seeds, b.Bytes())
	}
	return seeds
}
