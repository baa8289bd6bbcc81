package http1wire

import (
	"bytes"
	"io"
)

// ResponseScanner finds where responses end in a connection's bytes as
// they come, and discards them: the framing DiscardResponse reads, for a
// client that drives many connections from one thread and so cannot block
// in the middle of a response. The head is parsed by the same line steps
// as ReadResponseHead's.
type ResponseScanner struct {
	h     ResponseHead
	hs    headState
	phase scanPhase
	left  int64 // body or chunk bytes still to come
	memo  headMemo
}

// headMemo is the last final head a scanner parsed that came whole in one
// Scan. A load generator asks the same thing over and over, and the heads
// of the answers are mostly the same bytes, a Date changing once a second:
// a head of the same bytes, answering the same kind of request, parses to
// the same, so it is taken whole without parsing, for a comparison of its
// bytes. On nginx's answer that costs a tenth of the parse; a head that
// differs costs the comparison up to its first difference and a copy
// (BenchmarkScanner).
type headMemo struct {
	raw  []byte // the head, status line to blank line; nil when none
	h    ResponseHead
	head bool // it answered a HEAD request
}

// maxMemoHead bounds the head a scanner keeps.
const maxMemoHead = 4 << 10

type scanPhase uint8

const (
	scanStatus scanPhase = iota
	scanHeaders
	scanBody // left bytes, then done
	scanChunkSize
	scanChunkData // left bytes, then scanChunkEnd
	scanChunkEnd  // the CRLF after a chunk's data
	scanTrailers
	scanToEOF
)

// Scan consumes what it can of p, bytes of the response to a request
// (HEAD when head) and what follows it. It returns how many it used, and
// done when the last of them ended a final response, whose status and
// keep-alive Status then reports. Bytes left unused are the start of a
// line not yet whole: the caller hands them again, with what comes next
// after them; a line may be as long as the caller's buffer. The call after
// done begins the next response.
func (s *ResponseScanner) Scan(p []byte, head bool) (used int, done bool, err error) {
	start := -1 // where the head in parse began in p
	for used < len(p) {
		rest := p[used:]
		switch s.phase {
		case scanBody, scanChunkData:
			n := int(min(s.left, int64(len(rest))))
			used += n
			if s.left -= int64(n); s.left > 0 {
				return used, false, nil
			}
			if s.phase == scanBody {
				s.phase = scanStatus
				return used, true, nil
			}
			s.phase = scanChunkEnd
			continue
		case scanToEOF:
			return len(p), false, nil
		case scanStatus:
			if m := s.memo.raw; m != nil && s.memo.head == head && bytes.HasPrefix(rest, m) {
				used += len(m)
				s.h = s.memo.h
				if s.framed() {
					return used, true, nil
				}
				continue
			}
			start = used
		}
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			return used, false, nil
		}
		line := rest[:eol+1]
		used += len(line)
		inHead := s.phase == scanHeaders
		done, err := s.line(line, head)
		if err != nil {
			return used, false, err
		}
		if inHead && s.phase != scanHeaders && start >= 0 && s.h.Status >= 200 && used-start <= maxMemoHead {
			s.memo = headMemo{raw: append(s.memo.raw[:0], p[start:used]...), h: s.h, head: head}
		}
		if done {
			return used, true, nil
		}
	}
	return used, false, nil
}

// line takes one whole line of the head or of the chunked framing.
func (s *ResponseScanner) line(line []byte, head bool) (done bool, err error) {
	switch s.phase {
	case scanStatus:
		if err := s.hs.statusLine(line, &s.h); err != nil {
			return false, err
		}
		s.phase = scanHeaders
	case scanHeaders:
		end, err := s.hs.headerLine(line, &s.h, false)
		if !end || err != nil {
			return false, err
		}
		if head && s.h.Status >= 200 {
			s.h.Framing = NoBody
		}
		return s.framed(), nil
	case scanChunkSize:
		size, err := chunkSize(line)
		if err != nil {
			return false, err
		}
		s.phase, s.left = scanChunkData, size
		if size == 0 {
			s.phase = scanTrailers
		}
	case scanChunkEnd:
		if len(trimCRLF(line)) != 0 {
			return false, protocolError("chunk not followed by CRLF")
		}
		s.phase = scanChunkSize
	case scanTrailers:
		if len(trimCRLF(line)) == 0 {
			s.phase = scanStatus
			return true, nil
		}
	}
	return false, nil
}

// framed goes on from a whole head in s.h to its body; done says there is
// none, and the head was a final response's.
func (s *ResponseScanner) framed() (done bool) {
	switch s.h.Framing {
	case ByLength:
		if s.h.Length > 0 {
			s.phase, s.left = scanBody, s.h.Length
			return false
		}
	case ByChunks:
		s.phase = scanChunkSize
		return false
	case ByClose:
		s.phase = scanToEOF
		return false
	}
	// Interim responses are skipped, as DiscardResponse does.
	s.phase = scanStatus
	return s.h.Status >= 200 || s.h.Status == 101
}

// EOF says the connection ended after the bytes scanned so far, partial
// saying that some were left unused. It ends a response framed by the
// connection's close; anywhere else it is an error: io.EOF when no byte
// of a response came, io.ErrUnexpectedEOF in the middle of one.
func (s *ResponseScanner) EOF(partial bool) (done bool, err error) {
	switch {
	case s.phase == scanToEOF && !partial:
		s.phase = scanStatus
		return true, nil
	case s.phase == scanStatus && !partial:
		return false, io.EOF
	}
	return false, io.ErrUnexpectedEOF
}

// Status is the last response's status, and whether the connection can
// carry another request, once Scan said done.
func (s *ResponseScanner) Status() (status int, keep bool) { return s.h.Status, s.h.KeepAlive }

// Reset readies s for a new connection. It keeps its memo: a head's bytes
// parse the same on any connection.
func (s *ResponseScanner) Reset() { *s = ResponseScanner{memo: s.memo} }
