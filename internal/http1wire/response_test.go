package http1wire

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestDiscardResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		raw        string
		head       bool
		wantStatus int
		wantKeep   bool
		wantErr    error  // matched with errors.Is
		wantRest   string // bytes left for the next response
	}{
		{name: "content length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "header names in any case", raw: "HTTP/1.1 404 Not Found\r\ncOnTeNt-LeNgTh: 2\r\nX-Other: a\r\n\r\nnoNEXT", wantStatus: 404, wantKeep: true, wantRest: "NEXT"},
		{name: "spaces and tabs around values", raw: "HTTP/1.1 200 OK\r\nContent-Length:\t 2 \t\r\nConnection: \tfoo ,\tclose\t\r\n\r\nok", wantStatus: 200, wantKeep: false},
		{name: "bare LF line ends", raw: "HTTP/1.1 200 OK\nContent-Length: 1\n\nxNEXT", wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "status line without reason", raw: "HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n", wantStatus: 503, wantKeep: true},
		{name: "chunked with extensions and trailers", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\nNEXT", wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "chunked beats content length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nNEXT", wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "connection close", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", wantStatus: 200, wantKeep: false},
		{name: "body until close", raw: "HTTP/1.1 200 OK\r\n\r\nall of this until EOF", wantStatus: 200, wantKeep: false},
		{name: "HTTP/1.0 closes by default", raw: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", wantStatus: 200, wantKeep: false},
		{name: "HTTP/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\nNEXT", wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "204 has no body", raw: "HTTP/1.1 204 No Content\r\n\r\nNEXT", wantStatus: 204, wantKeep: true, wantRest: "NEXT"},
		{name: "304 has no body despite length", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\nNEXT", wantStatus: 304, wantKeep: true, wantRest: "NEXT"},
		{name: "HEAD response has no body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nNEXT", head: true, wantStatus: 200, wantKeep: true, wantRest: "NEXT"},
		{name: "interim 100 and 103 are skipped", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", wantStatus: 201, wantKeep: true},
		{name: "nothing at all", raw: "", wantErr: io.EOF},
		{name: "cut in the headers", raw: "HTTP/1.1 200 OK\r\nContent-Le", wantErr: io.ErrUnexpectedEOF},
		{name: "cut in the body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", wantErr: io.ErrUnexpectedEOF},
		{name: "cut in a chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", wantErr: io.ErrUnexpectedEOF},
		{name: "not HTTP", raw: "SSH-2.0-OpenSSH\r\n\r\n", wantErr: ErrProtocol},
		{name: "bad status code", raw: "HTTP/1.1 2x0 OK\r\n\r\n", wantErr: ErrProtocol},
		{name: "status below 100, not an interim response", raw: "HTTP/1.1 000 X\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", wantErr: ErrProtocol},
		{name: "bad content length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: ErrProtocol},
		{name: "conflicting content lengths", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", wantErr: ErrProtocol},
		{name: "bad chunk size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantErr: ErrProtocol},
		{name: "header without colon", raw: "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", wantErr: ErrProtocol},
		{name: "header longer than the buffer", raw: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 32<<10) + "\r\n\r\n", wantErr: ErrProtocol},
	}
	// DiscardResponse, and the scanner given the bytes at once or a byte
	// at a time, frame the same bytes the same way.
	readers := map[string]func(raw string, head bool) (status int, keep bool, rest []byte, err error){
		"DiscardResponse": func(raw string, head bool) (int, bool, []byte, error) {
			br := bufio.NewReaderSize(strings.NewReader(raw), 32<<10)
			status, keep, err := DiscardResponse(br, head)
			rest, _ := io.ReadAll(br)
			return status, keep, rest, err
		},
		"scanner, all at once": func(raw string, head bool) (int, bool, []byte, error) {
			return scanResponse(new(ResponseScanner), []byte(raw), head, 32<<10, len(raw)+1)
		},
		"scanner, a byte a read": func(raw string, head bool) (int, bool, []byte, error) {
			return scanResponse(new(ResponseScanner), []byte(raw), head, 32<<10, 1)
		},
		// The second time, the scanner knows the head from the first.
		"scanner, the same response again": func(raw string, head bool) (int, bool, []byte, error) {
			var s ResponseScanner
			_, _, _, _ = scanResponse(&s, []byte(raw), head, 32<<10, len(raw)+1)
			s.Reset()
			return scanResponse(&s, []byte(raw), head, 32<<10, len(raw)+1)
		},
	}
	for _, tt := range tests {
		for reader, read := range readers {
			t.Run(tt.name+"/"+reader, func(t *testing.T) {
				status, keep, rest, err := read(tt.raw, tt.head)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("error %v, want %v", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if status != tt.wantStatus || keep != tt.wantKeep {
					t.Errorf("status %d keep %v, want %d %v", status, keep, tt.wantStatus, tt.wantKeep)
				}
				if string(rest) != tt.wantRest {
					t.Errorf("left %q unread, want %q", rest, tt.wantRest)
				}
			})
		}
	}
}

// scanResponse reads one response from data with s, as a client with a
// read buffer of size bytes would, receiving step bytes a read; rest is
// what follows the response.
func scanResponse(s *ResponseScanner, data []byte, head bool, size, step int) (status int, keep bool, rest []byte, err error) {
	buf := make([]byte, 0, size)
	for {
		if len(buf) == size {
			return 0, false, nil, protocolError("line longer than %d bytes", size)
		}
		m := min(step, len(data), size-len(buf))
		if m == 0 {
			done, err := s.EOF(len(buf) > 0)
			status, keep = s.Status()
			return status, keep && done, nil, err
		}
		buf, data = append(buf, data[:m]...), data[m:]
		used, done, err := s.Scan(buf, head)
		if err != nil {
			return 0, false, nil, err
		}
		if done {
			status, keep = s.Status()
			return status, keep, append(buf[used:], data...), nil
		}
		buf = append(buf[:0], buf[used:]...)
	}
}

// A head the scanner knows frames by the request it answers: after a
// HEAD's answer, the same head answering a GET has a body.
func TestScannerMemoKnowsTheRequest(t *testing.T) {
	const h = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
	var s ResponseScanner
	for _, step := range []struct {
		head bool
		raw  string
	}{{true, h}, {false, h + "ok"}, {false, h + "ok"}, {true, h}} {
		used, done, err := s.Scan([]byte(step.raw), step.head)
		if used != len(step.raw) || !done || err != nil {
			t.Fatalf("HEAD %v: used %d of %d, done %v, error %v", step.head, used, len(step.raw), done, err)
		}
	}
}

func TestScannerAllocatesNothing(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nServer: x\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + strings.Repeat("x", 100) + "\r\n0\r\n\r\n")
	var s ResponseScanner
	allocs := testing.AllocsPerRun(1000, func() {
		if used, done, err := s.Scan(raw, false); used != len(raw) || !done || err != nil {
			t.Fatalf("used %d of %d, done %v, error %v", used, len(raw), done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response, want 0", allocs)
	}
}

func TestDiscardResponseAllocatesNothing(t *testing.T) {
	resp := "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("x", 100)
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + strings.Repeat("x", 100) + "\r\n0\r\n\r\n"
	for _, raw := range []string{resp, chunked} {
		r := strings.NewReader(raw)
		br := bufio.NewReaderSize(r, 32<<10)
		allocs := testing.AllocsPerRun(1000, func() {
			r.Reset(raw)
			br.Reset(r)
			if _, _, err := DiscardResponse(br, false); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per response, want 0", allocs)
		}
	}
}

// benchResponse is what nginx answers for a small static file, as
// bench/load's server does.
var benchResponse = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 20:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 251\r\nLast-Modified: Tue, 24 Nov 2026 19:00:00 GMT\r\nConnection: keep-alive\r\nETag: \"6b087c9f-fb\"\r\nAccept-Ranges: bytes\r\n\r\n" + strings.Repeat("x", 251)

func BenchmarkDiscardResponse(b *testing.B) {
	raw := benchResponse
	r := strings.NewReader(raw)
	br := bufio.NewReaderSize(r, 32<<10)
	for b.Loop() {
		r.Reset(raw)
		br.Reset(r)
		if _, _, err := DiscardResponse(br, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanner frames nginx's answer when the scanner knows its head
// from the answer before, and when each head differs from the last (here
// in its Date), so that each is parsed.
func BenchmarkScanner(b *testing.B) {
	other := []byte(strings.Replace(benchResponse, "20:00:00", "20:00:01", 1))
	for _, bc := range []struct {
		name string
		raws [2][]byte
	}{
		{"known head", [2][]byte{[]byte(benchResponse), []byte(benchResponse)}},
		{"new head", [2][]byte{[]byte(benchResponse), other}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var s ResponseScanner
			i := 0
			for b.Loop() {
				if _, done, err := s.Scan(bc.raws[i&1], false); !done || err != nil {
					b.Fatalf("done %v, err %v", done, err)
				}
				i++
			}
		})
	}
}
