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
}

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
		}
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			return used, false, nil
		}
		line := rest[:eol+1]
		used += len(line)
		if done, err := s.line(line, head); done || err != nil {
			return used, done, err
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
		switch s.h.Framing {
		case ByLength:
			if s.h.Length > 0 {
				s.phase, s.left = scanBody, s.h.Length
				return false, nil
			}
		case ByChunks:
			s.phase = scanChunkSize
			return false, nil
		case ByClose:
			s.phase = scanToEOF
			return false, nil
		}
		// Interim responses are skipped, as DiscardResponse does.
		s.phase = scanStatus
		return s.h.Status >= 200 || s.h.Status == 101, nil
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

// Reset readies s for a new connection.
func (s *ResponseScanner) Reset() { *s = ResponseScanner{} }
