package app

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"golang.org/x/net/http2/hpack"

	"github.com/meshbench/meshbench/internal/topology"
)

// gRPC calls are served by grpc-go's own HTTP/2 transport, not through
// net/http's h2c server and grpc.Server.ServeHTTP (grpc-go's experimental
// handler transport): that bridge cost 2.65x a bare grpc-go server's CPU
// per call in bench/app. Which server gets an h2c connection is decided
// by its first request: the sniffer reads the connection's opening frames
// up to that request's headers and hands the connection, those frames
// replayed, to the gRPC server when its content-type is application/grpc.

const (
	// h2PrefaceRest follows h2Preface's line in the client's preface.
	h2PrefaceRest = "\r\nSM\r\n\r\n"
	// A client may not send frames over 16 KiB before the server allows
	// it, and the sniffer never does.
	h2MaxFrame = 16 << 10
	// h2SniffLimit bounds what the sniffer buffers before it decides.
	h2SniffLimit = 256 << 10
)

// HTTP/2 frame types and flags the sniffer reads (RFC 9113, section 6).
const (
	frameHeaders      = 0x1
	frameSettings     = 0x4
	frameContinuation = 0x9
	flagAck           = 0x1
	flagEndHeaders    = 0x4
	flagPadded        = 0x8
	flagPriority      = 0x20
)

// emptySettings is a SETTINGS frame that changes nothing.
var emptySettings = []byte{0, 0, 0, frameSettings, 0, 0, 0, 0, 0}

var errSniff = errors.New("malformed HTTP/2 opening")

// sniffGRPC reads an h2c connection's opening, after the preface's first
// line, up to its first request's headers, and reports whether that
// request is a gRPC call. It returns the bytes the chosen server must read
// first: the preface and every frame read but one. A grpc-go client sends
// no request before the server's SETTINGS frame, so the sniffer sends an
// empty one; it swallows the client's acknowledgement of it, which the
// server the connection goes to would take for an acknowledgement of its
// own (net/http ends the connection on an unexpected one).
func sniffGRPC(c net.Conn, br *bufio.Reader) (bool, []byte, error) {
	replay := make([]byte, 0, 512)
	replay = append(replay, h2Preface...)
	rest := make([]byte, len(h2PrefaceRest))
	if _, err := io.ReadFull(br, rest); err != nil {
		return false, nil, err
	}
	if string(rest) != h2PrefaceRest {
		return false, nil, errSniff
	}
	replay = append(replay, rest...)
	if _, err := c.Write(emptySettings); err != nil {
		return false, nil, err
	}
	var (
		block                        []byte
		inHeaders, decided, grpcConn bool
		acked                        bool
		hdr                          [9]byte
	)
	for !decided || !acked {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return false, nil, err
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		if n > h2MaxFrame || len(replay)+9+n > h2SniffLimit {
			return false, nil, errSniff
		}
		start := len(replay)
		replay = append(replay, hdr[:]...)
		replay = append(replay, make([]byte, n)...)
		payload := replay[start+9:]
		if _, err := io.ReadFull(br, payload); err != nil {
			return false, nil, err
		}
		switch {
		case typ == frameSettings && flags&flagAck != 0 && !acked:
			acked = true
			replay = replay[:start]
			continue
		case decided:
			continue
		case typ == frameHeaders && !inHeaders:
			frag, err := headerFragment(payload, flags)
			if err != nil {
				return false, nil, err
			}
			block = append(block, frag...)
			inHeaders = true
		case typ == frameContinuation && inHeaders:
			block = append(block, payload...)
		case inHeaders:
			return false, nil, errSniff // nothing may come between a block's frames
		default:
			continue
		}
		if flags&flagEndHeaders != 0 {
			g, err := grpcContentType(block)
			if err != nil {
				return false, nil, err
			}
			grpcConn, decided = g, true
		}
	}
	return grpcConn, replay, nil
}

// headerFragment is a HEADERS frame's payload without padding and
// priority.
func headerFragment(p []byte, flags byte) ([]byte, error) {
	pad := 0
	if flags&flagPadded != 0 {
		if len(p) < 1 {
			return nil, errSniff
		}
		pad, p = int(p[0]), p[1:]
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, errSniff
		}
		p = p[5:]
	}
	if pad > len(p) {
		return nil, errSniff
	}
	return p[:len(p)-pad], nil
}

// grpcContentType decodes a request's header block and reports whether it
// is a gRPC call.
func grpcContentType(block []byte) (bool, error) {
	fields, err := hpack.NewDecoder(4096, nil).DecodeFull(block)
	if err != nil {
		return false, fmt.Errorf("%w: %w", errSniff, err)
	}
	for _, f := range fields {
		if f.Name == "content-type" {
			return strings.HasPrefix(f.Value, "application/grpc"), nil
		}
	}
	return false, nil
}

// handH2 hands an h2c connection, its preface's first line read, to the
// server for its protocol.
func (s *server) handH2(c net.Conn, br *bufio.Reader) {
	if !s.nativeGRPC {
		s.h2ln.hand(&replayConn{Conn: c, r: io.MultiReader(strings.NewReader(h2Preface), br)})
		return
	}
	grpcConn, replay, err := sniffGRPC(c, br)
	if err != nil {
		c.Close()
		return
	}
	// What the reader holds beyond the sniffed frames goes first too;
	// after that the server reads the connection itself.
	buffered, _ := br.Peek(br.Buffered())
	rc := &replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(append(replay, buffered...)), c)}
	if grpcConn {
		s.grpcln.hand(rc)
		return
	}
	s.h2ln.hand(rc)
}

// mixesHTTP2 reports whether the graph calls the service over both gRPC
// and plain h2c (counting http edges as h2c when forceH2C makes them so).
// A proxy may then pool both on one upstream connection, which only
// net/http's server answers whatever the request; otherwise each of the
// service's HTTP/2 connections carries one protocol, and the sniffer may
// pick its server by its first request.
func mixesHTTP2(g *topology.Graph, service string, forceH2C bool) bool {
	var grpc, h2c bool
	note := func(p topology.Protocol) {
		switch {
		case p == topology.ProtocolGRPC:
			grpc = true
		case p == topology.ProtocolH2C, p == topology.ProtocolHTTP && forceH2C:
			h2c = true
		}
	}
	if g.Entry == service && g.EntryProtocol.Or() != topology.ProtocolHTTP {
		note(g.EntryProtocol)
	}
	for _, s := range g.Services {
		for _, e := range g.Edges(s.Name) {
			if e.Service == service {
				note(e.Protocol)
			}
		}
	}
	return grpc && h2c
}
