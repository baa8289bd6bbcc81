package http1wire

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// FuzzResponse feeds the response parser, which faces any server, arbitrary
// bytes as a keep-alive connection's stream, read the ways a client reads
// it: the load engine's (DiscardResponse, and ResponseScanner, fed a few
// bytes at a time) and the test service's downstream client's
// (ReadResponseHead, then ReadBody). None may panic or loop; an accepted
// response has a real status; after an error the connection is never
// kept; a body read whole stays within its limit; the scanner frames the
// stream exactly as DiscardResponse does.
func FuzzResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n"), true)
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nyHTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"), false)
	const maxBody = 1 << 10
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		// Each accepted response consumes at least a status line, so each
		// loop ends within len(data) rounds.
		br := bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
		var discarded []string
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("DiscardResponse: %d responses from %d bytes", i, len(data))
			}
			status, keep, err := DiscardResponse(br, head)
			if err != nil {
				// The status may be kept (the head was read, the body
				// failed), but never the connection.
				if keep {
					t.Fatalf("DiscardResponse: error %v, yet keep-alive", err)
				}
				discarded = append(discarded, "error")
				break
			}
			if status < 100 || status > 999 {
				t.Fatalf("DiscardResponse accepted status %d", status)
			}
			discarded = append(discarded, fmt.Sprint(status, keep))
			if !keep {
				break
			}
		}
		// One scanner reads the stream, as a kept connection's does: a few
		// bytes a read, and all at once, when it knows a head that came
		// before.
		for _, step := range []int{1 + len(data)%7, len(data) + 1} {
			var s ResponseScanner
			var scanned []string
			for rest := data; ; {
				status, keep, next, err := scanResponse(&s, rest, head, 4<<10, step)
				if err != nil {
					scanned = append(scanned, "error")
					break
				}
				scanned = append(scanned, fmt.Sprint(status, keep))
				if rest = next; !keep {
					break
				}
			}
			if !slices.Equal(discarded, scanned) {
				t.Fatalf("DiscardResponse read %q, the scanner (%d bytes a read) %q", discarded, step, scanned)
			}
		}
		br = bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
		var body []byte
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("ReadResponseHead: %d responses from %d bytes", i, len(data))
			}
			h, err := ReadResponseHead(br)
			if err != nil {
				return
			}
			if h.Status < 100 || h.Status > 999 {
				t.Fatalf("ReadResponseHead accepted status %d", h.Status)
			}
			body, err = ReadBody(br, h, body[:0], maxBody)
			if err != nil {
				return
			}
			if len(body) > maxBody {
				t.Fatalf("ReadBody returned %d bytes, over its %d-byte limit", len(body), maxBody)
			}
			if !h.KeepAlive {
				return
			}
		}
	})
}

// FuzzRequest feeds the request parser, which faces any client, arbitrary
// bytes as a connection's stream, the way the test service reads it: line
// (skipping blank ones), head, body, again. It must never panic or loop;
// it answers an error status, or a request whose path has no query.
func FuzzRequest(f *testing.F) {
	f.Add([]byte("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST http://h/p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
	f.Add([]byte("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
		var req Request
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("%d requests from %d bytes", i, len(data))
			}
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				continue
			}
			if status := ReadRequest(br, line, &req); status != 0 {
				if status < 400 || http.StatusText(status) == "" {
					t.Fatalf("error status %d", status)
				}
				return
			}
			if bytes.IndexByte(req.Path, '?') >= 0 {
				t.Fatalf("path %q keeps its query", req.Path)
			}
			if err := DiscardRequestBody(br, &req); err != nil {
				return
			}
		}
	})
}
