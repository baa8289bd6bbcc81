package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
)

// server serves a responder on one port. It speaks HTTP/1.1 itself, since
// net/http's per-request machinery costs over twice nginx's CPU and the lab
// runs hundreds of these, and hands h2c connections (those that open with
// the HTTP/2 preface) to grpc-go's server when they carry gRPC, to a
// net/http server otherwise (see handH2).
type server struct {
	r       responder
	ctx     context.Context // requests' context; ends at the hard stop
	closing atomic.Bool
	// answered counts the service's own answers (not health checks), over
	// every protocol, for RequestsPath.
	answered atomic.Int64
	h2       *http.Server
	grpc     *grpc.Server
	h2ln     *connListener
	grpcln   *connListener
	// nativeGRPC serves gRPC connections on grpc-go's own transport;
	// false, gRPC goes through the h2c server (see mixesHTTP2).
	nativeGRPC bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// drainTimeout bounds the wait for in-flight requests at shutdown.
const drainTimeout = 5 * time.Second

// serve runs a server on ln until ctx ends, then stops accepting, finishes
// in-flight requests for up to drainTimeout and closes every connection.
// nativeGRPC is false when the graph calls the service over both gRPC and
// h2c (see mixesHTTP2).
func serve(ctx context.Context, ln net.Listener, r responder, nativeGRPC bool, log *slog.Logger) error {
	reqCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	s := &server{
		r: r, ctx: reqCtx, conns: map[net.Conn]struct{}{}, nativeGRPC: nativeGRPC,
		h2ln: newConnListener(ln.Addr()), grpcln: newConnListener(ln.Addr()),
	}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	s.h2 = &http.Server{
		Handler:     s,
		Protocols:   p,
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return reqCtx },
	}
	s.grpc = newGRPCServer(s)
	go s.h2.Serve(s.h2ln)
	go s.grpc.Serve(s.grpcln)

	errc := make(chan error, 1)
	go func() { errc <- s.acceptLoop(ln) }()
	var err error
	select {
	case err = <-errc:
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.closing.Store(true)
	ln.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	go s.h2.Shutdown(sctx)
	s.drain(sctx, stop)
	s.h2.Close()
	s.grpc.Stop()
	return err
}

func (s *server) acceptLoop(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			// Out of descriptors (a connection search past the open-file
			// limit), back off as net/http does: the connections held
			// stay served, and the server does not exit.
			var ne net.Error
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *server) forget(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// drain wakes connections blocked reading their next request, so that
// they end, lets in-flight requests finish until ctx ends, then cancels
// the requests still running and closes their connections.
func (s *server) drain(ctx context.Context, cancelRequests context.CancelFunc) {
	s.mu.Lock()
	for c := range s.conns {
		c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		cancelRequests()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
	}
}

// route answers one request on either protocol: the health checks, or the
// service's own answer for every other path.
func (s *server) route(ctx context.Context, path []byte, b []byte) ([]byte, int) {
	switch string(path) {
	case "/healthz":
		return append(b, "ok\n"...), http.StatusOK
	case "/readyz":
		if s.closing.Load() {
			return append(b, "shutting down\n"...), http.StatusServiceUnavailable
		}
		return append(b, "ok\n"...), http.StatusOK
	case RequestsPath:
		return append(strconv.AppendInt(b, s.answered.Load(), 10), '\n'), http.StatusOK
	}
	s.answered.Add(1)
	return s.r.respond(ctx, b)
}

// ServeHTTP answers the requests of h2c connections, gRPC calls among them.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isGRPC(r) {
		s.grpc.ServeHTTP(w, r)
		return
	}
	buf := getBuf()
	path := []byte(r.URL.Path)
	body, status := s.route(r.Context(), path, (*buf)[:0])
	h := w.Header()
	h["Content-Type"] = contentType(path)
	h["Content-Length"] = []string{itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	*buf = body
	putBuf(buf)
}

var (
	jsonType = []string{"application/json"}
	textType = []string{"text/plain; charset=utf-8"}
)

// RequestsPath answers, as text, how many requests the server has answered
// since it started, health checks and itself left out: a platform reads it
// to show how requests spread over a service's replicas.
const RequestsPath = "/meshbench/requests"

func contentType(path []byte) []string {
	if p := string(path); p == "/healthz" || p == "/readyz" || p == RequestsPath {
		return textType
	}
	return jsonType
}

// connListener hands accepted connections to a net/http server.
type connListener struct {
	addr   net.Addr
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// hand passes a connection on, or closes it if the listener is closed.
func (l *connListener) hand(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.closed:
		c.Close()
	}
}

func (l *connListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *connListener) Addr() net.Addr { return l.addr }
