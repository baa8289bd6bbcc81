package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"time"
)

// routeWatched routes an HTTP/1.1 request. When the answer may take a while
// (downstream calls, latency), it watches the connection meanwhile and
// cancels the request's context if the client goes away, as net/http does;
// a leaf answers at once and skips the watch's read and goroutine.
func (s *server) routeWatched(c net.Conn, br *bufio.Reader, path, b []byte) ([]byte, int) {
	if !s.r.mayWait() || br.Buffered() > 0 { // a pipelined request waits: the client is there
		return s.route(s.ctx, path, b)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	w := watch(c, cancel)
	b, status := s.route(ctx, path, b)
	if next, ok := w.stop(c); ok {
		// The watch read the first byte of the next request: put it back.
		br.Reset(io.MultiReader(bytes.NewReader([]byte{next}), c))
	}
	return b, status
}

type clientWatch struct {
	done chan struct{}
	b    [1]byte
	n    int
}

// watch reads from c until data arrives or c fails; a failure other than a
// deadline (which stop and shutdown use) means the client went away.
func watch(c net.Conn, cancel context.CancelFunc) *clientWatch {
	w := &clientWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var err error
		w.n, err = c.Read(w.b[:])
		var ne net.Error
		if w.n == 0 && !(errors.As(err, &ne) && ne.Timeout()) {
			cancel()
		}
	}()
	return w
}

// stop ends the watch and returns the byte it read, if any.
func (w *clientWatch) stop(c net.Conn) (byte, bool) {
	c.SetReadDeadline(aLongTimeAgo)
	<-w.done
	c.SetReadDeadline(time.Time{})
	return w.b[0], w.n == 1
}
