package app

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/meshbench/meshbench/internal/http1wire"
)

const (
	// h2Preface is the first line of every h2c connection.
	h2Preface = "PRI * HTTP/2.0\r\n"
)

// serveConn serves one connection's requests in turn (pipelining included)
// until the client closes it, asks to, or the server shuts down.
func (s *server) serveConn(c net.Conn) {
	defer s.forget(c)
	br := bufio.NewReaderSize(c, 4<<10)
	var req http1wire.Request
	var out []byte
	for first := true; ; first = false {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				writeError(c, http.StatusRequestURITooLong)
			}
			c.Close()
			return
		}
		if first && string(line) == h2Preface {
			s.handH2(c, br)
			return
		}
		if status := http1wire.ReadRequest(br, line, &req); status != 0 {
			writeError(c, status)
			c.Close()
			return
		}
		if req.Expect100 && (req.Chunked || req.Length > 0) {
			c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
		}
		if err := http1wire.DiscardRequestBody(br, &req); err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, http1wire.ErrBodyTooLarge) {
				status = http.StatusRequestEntityTooLarge
			}
			writeError(c, status)
			c.Close()
			return
		}
		buf := getBuf()
		body, status := s.routeWatched(c, br, req.Path, (*buf)[:0])
		keepAlive := req.KeepAlive && !s.closing.Load()
		out = appendResponseHead(out[:0], status, contentType(req.Path)[0], len(body), keepAlive)
		if !req.Head {
			out = append(out, body...)
		}
		*buf = body
		putBuf(buf)
		if _, err := c.Write(out); err != nil || !keepAlive {
			c.Close()
			return
		}
		if cap(out) > 64<<10 {
			out = nil // do not keep one huge answer's buffer per connection
		}
	}
}

var errTooLarge = errors.New("request head too large")

// readLine reads one line, skipping the empty lines a client may send
// between requests.
func readLine(br *bufio.Reader) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errTooLarge
		}
		if err != nil {
			return nil, err
		}
		if len(line) > 2 || (len(line) == 2 && line[0] != '\r') {
			return line, nil
		}
	}
}

func appendResponseHead(b []byte, status int, ctype string, length int, keepAlive bool) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nContent-Type: "...)
	b = append(b, ctype...)
	b = append(b, "\r\nDate: "...)
	b = append(b, httpDate()...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(length), 10)
	if !keepAlive {
		b = append(b, "\r\nConnection: close"...)
	}
	return append(b, "\r\n\r\n"...)
}

func writeError(c net.Conn, status int) {
	c.Write(appendResponseHead(nil, status, textType[0], 0, false))
}

// dateCache holds the Date header of the current second, formatted once.
type dateCache struct {
	unix int64
	text string
}

var date atomic.Pointer[dateCache]

func httpDate() string {
	now := time.Now()
	if d := date.Load(); d != nil && d.unix == now.Unix() {
		return d.text
	}
	d := &dateCache{unix: now.Unix(), text: now.UTC().Format(http.TimeFormat)}
	date.Store(d)
	return d.text
}

// replayConn is a connection whose first bytes were already read: it reads
// them again first.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
