// Package http1wire reads HTTP/1.x messages without allocating: response
// heads and bodies for the load engine and the test service's downstream
// client, request heads for the test service. It keeps only what frames a
// body and decides keep-alive. Entry points are plain functions over a
// *bufio.Reader, and a ResponseScanner for bytes that come piece by piece
// to a reader that cannot block; both are fuzzed.
package http1wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrProtocol marks a message that does not parse as HTTP/1.x.
var ErrProtocol = errors.New("malformed HTTP message")

func protocolError(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, a...)...)
}

// MaxHeaderBytes bounds a message's start line and headers together.
const MaxHeaderBytes = 64 << 10

// Framing is how an HTTP/1.x body is delimited.
type Framing int

// Framings.
const (
	ByLength Framing = iota
	ByChunks
	ByClose // the body runs to the end of the connection
	NoBody
)

// ResponseHead is what a client needs from a response's status line and
// headers.
type ResponseHead struct {
	Status    int
	KeepAlive bool // the connection can carry another request
	Framing   Framing
	Length    int64 // the Content-Length, for ByLength
	JSON      bool  // Content-Type is application/json
}

// ReadResponseHead reads a status line and headers.
func ReadResponseHead(br *bufio.Reader) (ResponseHead, error) {
	var h ResponseHead
	err := readHead(br, &h, true)
	return h, err
}

// readHead reads a status line and headers into h; the Content-Type only
// when wantType, as the load engine, which discards bodies, need not pay
// for it.
func readHead(br *bufio.Reader, h *ResponseHead, wantType bool) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return lineError(br, err)
	}
	var hs headState
	if err := hs.statusLine(line, h); err != nil {
		return err
	}
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return lineError(br, unexpectedEOF(err))
		}
		if end, err := hs.headerLine(line, h, wantType); end || err != nil {
			return err
		}
	}
}

// headState is what parsing a response head keeps between its lines,
// which come whole, each with its LF: from a bufio.Reader, or from a
// ResponseScanner's input.
type headState struct {
	total            int
	chunked, encoded bool
}

// statusLine parses the status line into h.
func (hs *headState) statusLine(line []byte, h *ResponseHead) error {
	// "HTTP/1.1 200 OK\r\n": version, space, three digits, then a space or
	// the end of the line.
	if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
		(line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
		return protocolError("bad status line %q", trimCRLF(line))
	}
	status := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if status < 100 {
		// Found by FuzzResponse: "000" passed for an interim response, so
		// a request waited for a final one until it timed out.
		return protocolError("bad status line %q: status below 100", trimCRLF(line))
	}
	*h = ResponseHead{
		Status:    status,
		KeepAlive: line[7] == '1', // HTTP/1.1 keeps the connection by default
		Length:    -1,
	}
	*hs = headState{total: len(line)}
	return nil
}

// headerLine parses one header line into h; end says it was the blank
// line that ends the head, and h's framing is then set.
func (hs *headState) headerLine(line []byte, h *ResponseHead, wantType bool) (end bool, err error) {
	hs.total += len(line)
	if hs.total > MaxHeaderBytes {
		return false, protocolError("headers longer than %d bytes", MaxHeaderBytes)
	}
	line = trimCRLF(line)
	if len(line) == 0 {
		switch {
		case h.Status < 200 || h.Status == 204 || h.Status == 304:
			h.Framing = NoBody
		case hs.chunked:
			h.Framing = ByChunks
		case hs.encoded || h.Length < 0:
			// A body with neither a length nor chunks ends when the server
			// closes the connection.
			h.Framing, h.KeepAlive = ByClose, false
		}
		return true, nil
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return false, protocolError("bad header line %q", line)
	}
	// Only four headers matter; the others are skipped unparsed.
	name, value := line[:colon], line[colon+1:]
	switch {
	case equalFold(name, "content-length"):
		value = bytes.TrimSpace(value)
		n, ok := parseDecimal(value)
		if !ok || (h.Length >= 0 && n != h.Length) {
			return false, protocolError("bad Content-Length %q", value)
		}
		h.Length = n
	case equalFold(name, "transfer-encoding"):
		hs.encoded = true
		hs.chunked = hasToken(value, "chunked")
	case equalFold(name, "connection"):
		if hasToken(value, "close") {
			h.KeepAlive = false
		} else if hasToken(value, "keep-alive") {
			h.KeepAlive = true
		}
	case wantType && equalFold(name, "content-type"):
		h.JSON = bytes.HasPrefix(bytes.TrimSpace(value), []byte("application/json"))
	}
	return false, nil
}

// DiscardResponse reads one response and discards its body. It returns
// the status, and keep when the connection can carry another request; a
// response to HEAD (head) has no body. Interim 1xx responses are skipped.
func DiscardResponse(br *bufio.Reader, head bool) (status int, keep bool, err error) {
	var h ResponseHead
	for {
		if err := readHead(br, &h, false); err != nil {
			return 0, false, err
		}
		if head && h.Status >= 200 {
			h.Framing = NoBody
		}
		// The framings spelled out, as in DiscardBody, to spare the hot
		// path a call.
		switch h.Framing {
		case ByLength:
			err = discard(br, h.Length)
		case ByChunks:
			err = WalkChunks(br, func(n int64) error { return discard(br, n) })
		case ByClose:
			err = discardToEOF(br)
		}
		if err != nil || h.Status >= 200 || h.Status == 101 {
			return h.Status, h.KeepAlive && err == nil, err
		}
	}
}

// DiscardBody reads and drops a body of the given framing.
func DiscardBody(br *bufio.Reader, fr Framing, length int64) error {
	switch fr {
	case ByLength:
		return discard(br, length)
	case ByChunks:
		return WalkChunks(br, func(n int64) error { return discard(br, n) })
	case ByClose:
		return discardToEOF(br)
	}
	return nil
}

// ReadBody appends a response's body to dst, failing past max bytes.
func ReadBody(br *bufio.Reader, h ResponseHead, dst []byte, max int64) ([]byte, error) {
	appendN := func(n int64) error {
		if int64(len(dst))+n > max {
			return fmt.Errorf("answer is over the %d-byte limit", max)
		}
		m := len(dst)
		dst = append(dst, make([]byte, n)...)
		_, err := io.ReadFull(br, dst[m:])
		return unexpectedEOF(err)
	}
	switch h.Framing {
	case ByLength:
		return dst, appendN(h.Length)
	case ByChunks:
		return dst, WalkChunks(br, appendN)
	case ByClose:
		r := io.LimitReader(br, max-int64(len(dst))+1)
		for {
			if len(dst) == cap(dst) {
				dst = append(dst, 0)[:len(dst)]
			}
			m, err := r.Read(dst[len(dst):cap(dst)])
			dst = dst[:len(dst)+m]
			if int64(len(dst)) > max {
				return dst, fmt.Errorf("answer is over the %d-byte limit", max)
			}
			if err == io.EOF {
				return dst, nil
			}
			if err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}

// WalkChunks reads a chunked body: for each chunk, data(n) consumes its n
// bytes from br; the trailers are dropped.
func WalkChunks(br *bufio.Reader, data func(n int64) error) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(br, unexpectedEOF(err))
		}
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			return discardTrailers(br)
		}
		if err := data(size); err != nil {
			return err
		}
		crlf, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(br, unexpectedEOF(err))
		}
		if len(trimCRLF(crlf)) != 0 {
			return protocolError("chunk not followed by CRLF")
		}
	}
}

// chunkSize parses a chunk's size line, LF included.
func chunkSize(line []byte) (int64, error) {
	line = trimCRLF(line)
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // chunk extensions
	}
	size, ok := parseHex(bytes.TrimSpace(line))
	if !ok {
		return 0, protocolError("bad chunk size %q", line)
	}
	return size, nil
}

func discard(br *bufio.Reader, n int64) error {
	for n > 0 {
		step := int(min(n, 1<<30))
		if _, err := br.Discard(step); err != nil {
			return unexpectedEOF(err)
		}
		n -= int64(step)
	}
	return nil
}

func discardTrailers(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(br, unexpectedEOF(err))
		}
		if len(trimCRLF(line)) == 0 {
			return nil
		}
	}
}

func discardToEOF(br *bufio.Reader) error {
	for {
		if _, err := br.Discard(br.Size()); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// lineError turns a line too long for the read buffer into a protocol
// error.
func lineError(br *bufio.Reader, err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return protocolError("header line longer than %d bytes", br.Size())
	}
	return err
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
