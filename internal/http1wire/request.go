package http1wire

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
)

// Request is what a server needs from an HTTP/1.x request head.
type Request struct {
	Path      []byte // copied out of the read buffer, without the query
	Head      bool   // the method is HEAD
	KeepAlive bool
	Chunked   bool
	Length    int64 // -1: none
	Expect100 bool
}

// ReadRequest parses the request line (already read, with its CRLF) and
// reads the headers into req, reusing req.Path's storage. It returns 0, or
// the error status to answer with.
func ReadRequest(br *bufio.Reader, line []byte, req *Request) int {
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
	*req = Request{Path: append(req.Path[:0], requestPath(target)...), Head: string(method) == "HEAD",
		KeepAlive: minor == 1, Length: -1}
	total := len(line)
	for {
		h, err := br.ReadSlice('\n')
		total += len(h)
		if err != nil || total > MaxHeaderBytes {
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
		case equalFold(name, "content-length"):
			n, ok := parseDecimal(value)
			if !ok || (req.Length >= 0 && n != req.Length) {
				return http.StatusBadRequest
			}
			req.Length = n
		case equalFold(name, "transfer-encoding"):
			req.Chunked = hasToken(value, "chunked")
		case equalFold(name, "connection"):
			if hasToken(value, "close") {
				req.KeepAlive = false
			} else if minor == 0 && hasToken(value, "keep-alive") {
				req.KeepAlive = true
			}
		case equalFold(name, "expect"):
			req.Expect100 = equalFold(value, "100-continue")
		}
	}
}

// MaxRequestBody bounds a request body, and so an upload: the load
// generator sends at most this many bytes, and the test service refuses
// more.
const MaxRequestBody = 1 << 30

// ErrBodyTooLarge is a request body over MaxRequestBody.
var ErrBodyTooLarge = errors.New("request body over the size limit")

// DiscardRequestBody reads and drops a request's body, failing with
// ErrBodyTooLarge, before reading it, past MaxRequestBody.
func DiscardRequestBody(br *bufio.Reader, req *Request) error {
	switch {
	case req.Chunked:
		var total int64
		return WalkChunks(br, func(n int64) error {
			if total += n; total > MaxRequestBody {
				return ErrBodyTooLarge
			}
			return discard(br, n)
		})
	case req.Length > MaxRequestBody:
		return ErrBodyTooLarge
	case req.Length > 0:
		return DiscardBody(br, ByLength, req.Length)
	}
	return nil
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
