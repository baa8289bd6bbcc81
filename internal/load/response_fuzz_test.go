package load

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadResponse feeds the response parser, which faces any server,
// arbitrary bytes as a keep-alive connection's stream: it must never
// panic or loop, and what it accepts must be a real status.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		br := bufio.NewReaderSize(bytes.NewReader(data), readBufferSize)
		// Each accepted response consumes at least a status line, so the
		// loop ends within len(data) rounds.
		for range len(data) + 1 {
			status, keep, err := readResponse(br, head)
			if err != nil {
				// The status may be kept (the head was read, the body
				// failed), but never the connection.
				if keep {
					t.Fatalf("error %v, yet keep-alive", err)
				}
				return
			}
			if status < 100 || status > 999 {
				t.Fatalf("accepted status %d", status)
			}
			if !keep {
				return
			}
		}
		t.Fatalf("%d responses from %d bytes", len(data)+1, len(data))
	})
}
