package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The HTTP/2 limits the client works with (RFC 9113).
const (
	maxStreamID      = 1<<31 - 1
	maxWindow        = 1<<31 - 1
	defaultWindow    = 65535
	defaultFrameSize = 16384
	// recvWindow is what the client lets the server send, per stream and
	// for the connection: large, so that a response is never held up by
	// flow control and WINDOW_UPDATE frames are rare.
	recvWindow = 1 << 30
)

// http2Conn is one HTTP/2 client connection, cleartext with prior knowledge
// (h2c) or TLS with ALPN, carrying one request at a time as a connection
// of the HTTP/1.1 engine does. The frames are x/net/http2's Framer and the
// header blocks its hpack; the connection itself is handled here, by the
// worker's goroutine alone, with no read loop, lock or channel per request:
// the request's frames are written by the read that waits for the answer
// (rawIO), and control frames (SETTINGS and PING acknowledgements,
// WINDOW_UPDATE) go out with the next write.
type http2Conn struct {
	dial func(context.Context) (net.Conn, error)
	// headers is the request's HEADERS frame, stream ID zero: its header
	// block never uses HPACK's dynamic table, so the same bytes serve
	// every request on every connection. block is the block alone, for a
	// server whose frames are too small for it.
	headers, block []byte
	body           []byte
	keepAlive      bool
	window         uint32 // recvWindow; smaller in tests of flow control
	deadline       ioDeadline

	mu     sync.Mutex // guards closed, and conn against abort
	closed bool
	conn   net.Conn
	raw    *rawIO // set when conn is plain TCP
	br     *bufio.Reader
	fr     *http2.Framer
	dec    *hpack.Decoder
	// out holds frames to write before the next read; request says that
	// they start a request, so that nothing can answer them before they go.
	out     []byte
	request bool

	// The connection's state.
	nextID         uint32
	goaway         bool   // no new streams: the server sent GOAWAY
	frameSize      uint32 // the server's SETTINGS_MAX_FRAME_SIZE
	maxStreams     uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	sendWindow     int64  // what the server lets us send on the connection
	initialWindow  int64  // the server's SETTINGS_INITIAL_WINDOW_SIZE
	unacked        uint32 // bytes received on the connection and not yet returned by WINDOW_UPDATE
	serverSettings bool   // the server's first SETTINGS came

	// The request in flight.
	stream         uint32
	streamWindow   int64 // what the server lets us send on the stream
	streamUnacked  uint32
	status         int
	final          bool // the final (non-1xx) response head came
	ended          bool // the server ended the stream
	streamErr      error
	blockStream    uint32 // the stream of the header block being read
	blockEndStream bool
	blockStatus    int
	blockErr       error
}

// h2StreamError is a request whose stream the server reset (RST_STREAM).
type h2StreamError struct{ code http2.ErrCode }

func (e *h2StreamError) Error() string { return "http2: server reset the stream: " + e.code.String() }

// h2GoAwayError is a request the server shut its connection down before
// processing (GOAWAY with a lower last stream ID).
type h2GoAwayError struct{ code http2.ErrCode }

func (e *h2GoAwayError) Error() string {
	return "http2: server sent GOAWAY before processing the request: " + e.code.String()
}

func newHTTP2Conn(d *dialer, t target, o *Options) *http2Conn {
	block := http2HeaderBlock(o, t)
	f := make([]byte, 9, 9+len(block))
	flags := http2.FlagHeadersEndHeaders
	body := o.requestBody()
	if len(body) == 0 {
		flags |= http2.FlagHeadersEndStream
	}
	f[0], f[1], f[2] = byte(len(block)>>16), byte(len(block)>>8), byte(len(block))
	f[3], f[4] = byte(http2.FrameHeaders), byte(flags)
	return &http2Conn{
		dial:      d.dial,
		headers:   append(f, block...),
		block:     block,
		body:      body,
		keepAlive: !o.NoKeepAlive,
		window:    recvWindow,
		deadline:  ioDeadline{timeout: o.Timeout},
		br:        bufio.NewReaderSize(nil, readBufferSize),
	}
}

// http2HeaderBlock encodes the request's header fields once. Fields go as
// static-table references or literals without indexing, never into the
// dynamic table, so that the block means the same on any connection at
// any time. Regular headers are sorted, as in http1Request.
func http2HeaderBlock(o *Options, t target) []byte {
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	authority := t.authority(h)
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	// Connection-specific fields are not allowed in HTTP/2 (RFC 9113
	// 8.2.2); Host is :authority.
	for _, k := range []string{"Host", "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length"} {
		h.Del(k)
	}
	if te := h.Get("Te"); te != "" && !strings.EqualFold(te, "trailers") {
		h.Del("Te")
	}
	if n := max(int64(len(o.Body)), o.BodySize); n > 0 || o.Method == http.MethodPost || o.Method == http.MethodPut || o.Method == http.MethodPatch {
		h.Set("Content-Length", strconv.FormatInt(n, 10))
	}
	scheme := "http"
	if t.tls {
		scheme = "https"
	}
	fields := []hpack.HeaderField{
		{Name: ":method", Value: o.Method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
		{Name: ":path", Value: t.url.RequestURI()},
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fields = append(fields, hpack.HeaderField{Name: strings.ToLower(k), Value: v})
		}
	}
	// An encoder whose dynamic table is limited to zero indexes nothing;
	// its first block starts with the table size update that announces
	// the limit, so the block kept is the second.
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	enc.SetMaxDynamicTableSizeLimit(0)
	for range 2 {
		buf.Reset()
		for _, f := range fields {
			_ = enc.WriteField(f) // writes to a bytes.Buffer: no error
		}
	}
	return bytes.Clone(buf.Bytes())
}

func (c *http2Conn) roundTrip(ctx context.Context, now time.Time) (int, error) {
	for retry := true; ; retry = false {
		reused := c.conn != nil && !c.goaway && c.nextID <= maxStreamID
		if !reused {
			if err := c.connect(ctx); err != nil {
				return 0, err
			}
		}
		status, err := c.exchange(now)
		if err == nil {
			if !c.keepAlive || c.goaway {
				c.drop()
			}
			return status, nil
		}
		var reset *h2StreamError
		var away *h2GoAwayError
		switch {
		case errors.As(err, &reset):
			// The connection lives on. A refused stream was not
			// processed: try once more.
			if c.goaway || !c.keepAlive {
				c.drop()
			}
			if !retry || reset.code != http2.ErrCodeRefusedStream {
				return 0, err
			}
		case errors.As(err, &away):
			// A graceful shutdown (NO_ERROR) left the request unprocessed:
			// try once more on a new connection.
			c.drop()
			if !retry || away.code != http2.ErrCodeNo {
				return 0, err
			}
		default:
			c.drop()
			// As with HTTP/1.1: a reused connection closed under a request
			// that got nothing back is tried once more on a new one.
			if !reused || !retry || !noResponse(err) || c.final {
				return 0, err
			}
		}
	}
}

// exchange sends one request on a new stream and reads frames until the
// server ends the stream.
func (c *http2Conn) exchange(now time.Time) (int, error) {
	if err := c.deadline.extend(c.conn, now); err != nil {
		return 0, err
	}
	id := c.nextID
	c.nextID += 2
	c.stream, c.streamWindow, c.streamUnacked = id, c.initialWindow, 0
	c.status, c.final, c.ended, c.streamErr = 0, false, false, nil
	c.request = true
	if len(c.block) <= int(c.frameSize) {
		n := len(c.out)
		c.out = append(c.out, c.headers...)
		binary.BigEndian.PutUint32(c.out[n+5:], id)
	} else if err := c.writeSplitHeaders(id); err != nil {
		return 0, err
	}
	body := c.body
	for !c.ended {
		if len(body) > 0 {
			n := min(int64(len(body)), int64(c.frameSize), c.sendWindow, c.streamWindow)
			if n > 0 {
				_ = c.fr.WriteData(id, n == int64(len(body)), body[:n]) // appends to out: no error
				body = body[n:]
				c.sendWindow -= n
				c.streamWindow -= n
				continue
			}
		}
		if err := c.readFrame(); err != nil {
			return 0, err
		}
		if c.streamErr != nil {
			return 0, c.streamErr
		}
	}
	if len(body) > 0 {
		// Answered before the whole body went: tell the server that the
		// rest is not coming (RFC 9113 8.1).
		_ = c.fr.WriteRSTStream(id, http2.ErrCodeNo)
	}
	return c.status, nil
}

// writeSplitHeaders sends a header block larger than the server's frame
// size as HEADERS and CONTINUATION frames.
func (c *http2Conn) writeSplitHeaders(id uint32) error {
	b := c.block
	first := b[:c.frameSize]
	b = b[c.frameSize:]
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: len(c.body) == 0}); err != nil {
		return err
	}
	for len(b) > 0 {
		n := min(len(b), int(c.frameSize))
		if err := c.fr.WriteContinuation(id, n == len(b), b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readFrame reads one frame and acts on it.
func (c *http2Conn) readFrame() error {
	f, err := c.fr.ReadFrame()
	if err != nil {
		var ce http2.ConnectionError
		var se http2.StreamError
		switch {
		case errors.As(err, &ce), errors.As(err, &se), errors.Is(err, http2.ErrFrameTooLarge):
			if d := c.fr.ErrorDetail(); d != nil {
				err = fmt.Errorf("%w: %v", err, d)
			}
			return protocolError("http2: %v", err)
		}
		return err
	}
	if !c.serverSettings {
		// The server's connection preface is a SETTINGS frame.
		if s, ok := f.(*http2.SettingsFrame); !ok || s.IsAck() {
			return protocolError("http2: server's first frame is %v, not SETTINGS", f.Header().Type)
		}
		c.serverSettings = true
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.HeadersFrame:
		c.blockStream, c.blockEndStream, c.blockStatus, c.blockErr = f.StreamID, f.StreamEnded(), 0, nil
		c.dec.SetEmitEnabled(f.StreamID == c.stream && !c.ended)
		return c.onBlock(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		return c.onBlock(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if err := f.ForeachSetting(c.applySetting); err != nil {
			return protocolError("http2: server's SETTINGS: %v", err)
		}
		return c.fr.WriteSettingsAck()
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		return c.fr.WritePing(true, f.Data)
	case *http2.WindowUpdateFrame:
		return c.onWindowUpdate(f)
	case *http2.RSTStreamFrame:
		if f.StreamID == c.stream && !c.ended {
			c.streamErr = &h2StreamError{code: f.ErrCode}
		}
	case *http2.GoAwayFrame:
		c.goaway = true
		if c.stream > f.LastStreamID && !c.ended {
			c.streamErr = &h2GoAwayError{code: f.ErrCode}
		}
	case *http2.PushPromiseFrame:
		return protocolError("http2: PUSH_PROMISE although push is disabled")
	}
	// PRIORITY and unknown frame types are ignored, as RFC 9113 says.
	return nil
}

func (c *http2Conn) onData(f *http2.DataFrame) error {
	// Flow control counts the whole payload, padding included; frames of
	// streams already ended count for the connection too.
	if n := f.Length; n > 0 {
		c.unacked += n
		if c.unacked >= c.window/2 {
			_ = c.fr.WriteWindowUpdate(0, c.unacked)
			c.unacked = 0
		}
		if f.StreamID == c.stream && !c.ended && !f.StreamEnded() {
			c.streamUnacked += n
			if c.streamUnacked >= c.window/2 {
				_ = c.fr.WriteWindowUpdate(c.stream, c.streamUnacked)
				c.streamUnacked = 0
			}
		}
	}
	if f.StreamID != c.stream || c.ended {
		return nil
	}
	if !c.final {
		return protocolError("http2: DATA before the response's HEADERS")
	}
	c.ended = f.StreamEnded()
	return nil
}

// onBlock decodes a fragment of a header block; every block is decoded,
// whatever its stream, to keep HPACK's dynamic table in step with the
// server's. Only the request's own blocks emit fields.
func (c *http2Conn) onBlock(frag []byte, end bool) error {
	if _, err := c.dec.Write(frag); err != nil {
		return protocolError("http2: header block: %v", err)
	}
	if !end {
		return nil
	}
	if err := c.dec.Close(); err != nil {
		return protocolError("http2: header block: %v", err)
	}
	if c.blockStream != c.stream || c.ended {
		return nil
	}
	switch {
	case c.blockErr != nil:
		return c.blockErr
	case c.final:
		// Trailers: they end the stream.
		if !c.blockEndStream {
			return protocolError("http2: trailers without END_STREAM")
		}
	case c.blockStatus == 0:
		return protocolError("http2: response without :status")
	case c.blockStatus < 200:
		// An interim response; the final one follows.
		if c.blockEndStream {
			return protocolError("http2: interim response %d ends the stream", c.blockStatus)
		}
		return nil
	default:
		c.status, c.final = c.blockStatus, true
	}
	c.ended = c.blockEndStream
	return nil
}

// emit receives the request's response fields: the first one, which must
// be :status as pseudo-fields come first, is all the engine wants, so the
// rest of the block is decoded without building strings.
func (c *http2Conn) emit(f hpack.HeaderField) {
	c.dec.SetEmitEnabled(false)
	if f.Name != ":status" {
		return
	}
	v := f.Value
	if len(v) != 3 || v[0] < '1' || v[0] > '9' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		c.blockErr = protocolError("http2: bad :status %q", v)
		return
	}
	c.blockStatus = int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0')
}

func (c *http2Conn) applySetting(s http2.Setting) error {
	if err := s.Valid(); err != nil {
		return err
	}
	switch s.ID {
	case http2.SettingMaxFrameSize:
		c.frameSize = s.Val
	case http2.SettingMaxConcurrentStreams:
		c.maxStreams = s.Val
	case http2.SettingInitialWindowSize:
		// The change applies to open streams too (RFC 9113 6.9.2).
		delta := int64(s.Val) - c.initialWindow
		c.initialWindow = int64(s.Val)
		if c.stream != 0 && !c.ended {
			c.streamWindow += delta
		}
	}
	// The header table size bounds the dynamic table of the blocks the
	// client sends, which use none.
	return nil
}

func (c *http2Conn) onWindowUpdate(f *http2.WindowUpdateFrame) error {
	switch f.StreamID {
	case 0:
		c.sendWindow += int64(f.Increment)
		if c.sendWindow > maxWindow {
			return protocolError("http2: connection window over 2^31-1")
		}
	case c.stream:
		c.streamWindow += int64(f.Increment)
		if c.streamWindow > maxWindow && !c.ended {
			c.streamErr = protocolError("http2: stream window over 2^31-1")
		}
	}
	return nil
}

// connect opens a connection and exchanges the connection prefaces: the
// client's, then the server's SETTINGS, so that its limits are known
// before the first request.
func (c *http2Conn) connect(ctx context.Context) error {
	c.drop()
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
	c.raw = nil
	if tc, ok := conn.(*net.TCPConn); ok {
		if c.raw, err = newRawIO(tc); err != nil {
			c.drop()
			return err
		}
	}
	c.out = c.out[:0]
	c.br.Reset(http2Wire{c})
	c.fr = http2.NewFramer(http2Wire{c}, c.br)
	c.fr.SetReuseFrames()
	c.dec = hpack.NewDecoder(4096, c.emit)
	c.dec.SetMaxStringLength(readBufferSize)
	c.nextID, c.goaway, c.serverSettings = 1, false, false
	c.frameSize, c.maxStreams = defaultFrameSize, maxStreamID
	c.sendWindow, c.initialWindow, c.unacked = defaultWindow, defaultWindow, 0
	c.stream, c.ended = 0, true
	c.deadline.at = time.Time{}
	if err := c.deadline.extend(conn, time.Now()); err != nil {
		c.drop()
		return err
	}
	c.out = append(c.out, http2.ClientPreface...)
	_ = c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: c.window},
	)
	if c.window > defaultWindow {
		_ = c.fr.WriteWindowUpdate(0, c.window-defaultWindow)
	}
	for !c.serverSettings {
		if err := c.readFrame(); err != nil {
			c.drop()
			return err
		}
	}
	if c.maxStreams == 0 {
		c.drop()
		return protocolError("http2: the server allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)")
	}
	return nil
}

// http2Wire is the connection as the Framer sees it: writes collect in
// out, and a read first writes what collected, so that a request and the
// control frames before it leave in one system call.
type http2Wire struct{ c *http2Conn }

func (w http2Wire) Write(p []byte) (int, error) {
	w.c.out = append(w.c.out, p...)
	return len(p), nil
}

func (w http2Wire) Read(p []byte) (int, error) {
	c := w.c
	request := c.request
	c.request = false
	if c.raw != nil {
		switch {
		case len(c.out) == 0:
		case request:
			c.raw.send(c.out)
		default:
			c.raw.flush(c.out)
		}
		n, err := c.raw.Read(p)
		// rawIO wrote out before it read, or failed and the connection
		// goes.
		c.out = c.out[:0]
		return n, err
	}
	if len(c.out) > 0 {
		_, err := c.conn.Write(c.out)
		c.out = c.out[:0]
		if err != nil {
			return 0, err
		}
	}
	return c.conn.Read(p)
}

// drop closes the current connection; the next request dials a new one.
func (c *http2Conn) drop() {
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
func (c *http2Conn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
	}
}
