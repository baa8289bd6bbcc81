package load

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// framing is how an HTTP/1.x response body is delimited.
type framing int

const (
	byLength framing = iota
	byChunks
	byClose
	noBody
)

// readResponse reads one HTTP/1.x response and discards its body without
// allocating. It returns the status, and keep when the connection can carry
// another request. Interim 1xx responses are skipped.
func readResponse(br *bufio.Reader, head bool) (status int, keep bool, err error) {
	for {
		var fr framing
		var length int64
		status, keep, fr, length, err = readHead(br)
		if err != nil {
			return 0, false, err
		}
		if head && status >= 200 {
			fr = noBody
		}
		switch fr {
		case byLength:
			err = discard(br, length)
		case byChunks:
			err = discardChunks(br)
		case byClose:
			err = discardToEOF(br)
		}
		if err != nil || status >= 200 || status == 101 {
			return status, keep && err == nil, err
		}
	}
}

// readHead reads the status line and headers, keeping only what frames the
// body and decides keep-alive.
func readHead(br *bufio.Reader) (status int, keep bool, fr framing, length int64, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, false, 0, 0, lineError(err)
	}
	// "HTTP/1.1 200 OK\r\n": version, space, three digits, then a space or
	// the end of the line.
	if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
		(line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
		return 0, false, 0, 0, protocolError("bad status line %q", trimCRLF(line))
	}
	status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	keep = line[7] == '1'
	length = -1
	chunked, encoded := false, false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, false, 0, 0, lineError(err)
		}
		line = trimCRLF(line)
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, false, 0, 0, protocolError("bad header line %q", line)
		}
		// Only three headers matter; the others are skipped unparsed.
		name, value := line[:colon], line[colon+1:]
		switch {
		case equalFold(name, "content-length"):
			value = bytes.TrimSpace(value)
			n, ok := parseDecimal(value)
			if !ok || (length >= 0 && n != length) {
				return 0, false, 0, 0, protocolError("bad Content-Length %q", value)
			}
			length = n
		case equalFold(name, "transfer-encoding"):
			encoded = true
			chunked = hasTokenFold(value, "chunked")
		case equalFold(name, "connection"):
			if hasTokenFold(value, "close") {
				keep = false
			} else if hasTokenFold(value, "keep-alive") {
				keep = true
			}
		}
	}
	switch {
	case status < 200 || status == 204 || status == 304:
		fr = noBody
	case chunked:
		fr = byChunks
	case encoded || length < 0:
		// A body with neither a length nor chunks ends when the server
		// closes the connection.
		fr, keep = byClose, false
	}
	return status, keep, fr, length, nil
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

// discardChunks reads a chunked body: hex size lines, data, and trailers.
func discardChunks(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(unexpectedEOF(err))
		}
		line = trimCRLF(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, ok := parseHex(bytes.TrimSpace(line))
		if !ok {
			return protocolError("bad chunk size %q", line)
		}
		if size == 0 {
			return discardTrailers(br)
		}
		if err := discard(br, size); err != nil {
			return err
		}
		crlf, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(unexpectedEOF(err))
		}
		if len(trimCRLF(crlf)) != 0 {
			return protocolError("chunk not followed by CRLF")
		}
	}
}

func discardTrailers(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(unexpectedEOF(err))
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

// lineError turns a line too long for the read buffer into a protocol error.
func lineError(err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return protocolError("header line longer than %d bytes", readBufferSize)
	}
	return err
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func trimCRLF(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case isDigit(c):
			n = n<<4 | int64(c-'0')
		case 'a' <= c && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// equalFold compares b with lower, a lower-case ASCII string, ignoring case.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasTokenFold reports whether a comma-separated header value holds token.
func hasTokenFold(v []byte, token string) bool {
	v = bytes.TrimSpace(v)
	if bytes.IndexByte(v, ',') < 0 {
		return equalFold(v, token) // the usual case: a single token
	}
	for len(v) > 0 {
		item := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if equalFold(bytes.TrimSpace(item), token) {
			return true
		}
	}
	return false
}
