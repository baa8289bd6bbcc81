package app

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strconv"
)

// request is what the server needs from an HTTP/1.1 request head.
type request struct {
	path      []byte // copied out of the read buffer
	head      bool
	keepAlive bool
	chunked   bool
	length    int64 // -1: none
	expect100 bool
}

// readRequest parses the request line and reads the headers into req. It
// returns 0, or the error status to answer with.
func readRequest(br *bufio.Reader, line []byte, req *request) int {
	// METHOD SP target SP HTTP/1.x CRLF
	line = trimCRLF(line)
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 {
		return http.StatusBadRequest
	}
	method, target, proto := line[:sp1], line[sp1+1:sp2], line[sp2+1:]
	var minor byte
	switch string(proto) {
	case "HTTP/1.1":
		minor = 1
	case "HTTP/1.0":
	default:
		return http.StatusHTTPVersionNotSupported
	}
	*req = request{path: append(req.path[:0], requestPath(target)...), head: string(method) == "HEAD",
		keepAlive: minor == 1, length: -1}
	total := len(line)
	for {
		h, err := br.ReadSlice('\n')
		total += len(h)
		if err != nil || total > maxHeaderBytes {
			return http.StatusRequestHeaderFieldsTooLarge
		}
		h = trimCRLF(h)
		if len(h) == 0 {
			return 0
		}
		colon := bytes.IndexByte(h, ':')
		if colon <= 0 {
			return http.StatusBadRequest
		}
		name, value := h[:colon], bytes.TrimSpace(h[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (req.length >= 0 && n != req.length) {
				return http.StatusBadRequest
			}
			req.length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			req.chunked = hasToken(value, "chunked")
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				req.keepAlive = false
			} else if minor == 0 && hasToken(value, "keep-alive") {
				req.keepAlive = true
			}
		case bytes.EqualFold(name, []byte("Expect")):
			req.expect100 = bytes.EqualFold(value, []byte("100-continue"))
		}
	}
}

// requestPath returns the path of an origin-form ("/a?b") or absolute-form
// ("http://host/a?b") target, without the query.
func requestPath(target []byte) []byte {
	if i := bytes.Index(target, []byte("://")); i >= 0 && target[0] != '/' {
		target = target[i+3:]
		if j := bytes.IndexByte(target, '/'); j >= 0 {
			target = target[j:]
		} else {
			target = []byte("/")
		}
	}
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	return target
}

// discardBody reads and drops the request body: the service ignores it.
func discardBody(br *bufio.Reader, req *request) error {
	if req.chunked {
		return discardChunked(br)
	}
	if req.length > 0 {
		_, err := br.Discard(int(req.length))
		return err
	}
	return nil
}

func discardChunked(br *bufio.Reader) error {
	return readChunks(br, func(n int64) error {
		_, err := br.Discard(int(n))
		return err
	})
}

// readChunks walks a chunked body: for each chunk, data calls data(n) to
// consume its n bytes from br; the trailers are dropped.
func readChunks(br *bufio.Reader, data func(n int64) error) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = trimCRLF(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 || n > maxBody {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, up to the empty line
				t, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(trimCRLF(t)) == 0 {
					return nil
				}
			}
		}
		if err := data(n); err != nil {
			return err
		}
		if _, err := br.Discard(2); err != nil { // the chunk's CRLF
			return err
		}
	}
}

func trimCRLF(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// hasToken reports whether a comma-separated header value holds token,
// case-insensitively.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}
