package app

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"
)

// FuzzParseRequest feeds the request parser, which faces any client,
// arbitrary bytes as a connection's stream, the way the server reads it:
// line, head, body, again. It must never panic or loop; it answers an
// error status or a request whose path has no query.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST http://h/p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
	f.Add([]byte("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
		var req request
		for range len(data) + 1 {
			line, err := readLine(br)
			if err != nil {
				return
			}
			status := readRequest(br, line, &req)
			if status != 0 {
				if status < 400 || http.StatusText(status) == "" {
					t.Fatalf("error status %d", status)
				}
				return
			}
			if bytes.IndexByte(req.path, '?') >= 0 {
				t.Fatalf("path %q keeps its query", req.path)
			}
			if err := discardBody(br, &req); err != nil {
				return
			}
		}
		t.Fatalf("%d requests from %d bytes", len(data)+1, len(data))
	})
}
