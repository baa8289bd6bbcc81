package load

import (
	"io"
	"net"
	"syscall"
)

// rawIO reads and writes a TCP connection through its raw file descriptor,
// to spend one system call per direction per request. A net.Conn costs one
// more: its Read first tries the socket, finds nothing yet (the response is
// still on its way), and only then parks in the netpoller. rawIO writes the
// request inside the read callback instead, after the poller's readiness
// was reset, then parks at once and reads once woken.
//
// Parking at once is right only when what the read waits for can come
// after the write alone: the answer to a request. The reset drops a
// readiness the poller already saw, so bytes that came before the write
// would wake nothing, and a read could wait for an answer already in the
// socket. Other writes (an HTTP/2 acknowledgement sent in the middle of a
// response) go with flush, which reads before it parks.
type rawIO struct {
	conn    *net.TCPConn
	rc      syscall.RawConn
	pending []byte // request bytes to write before the next read
	check   bool   // after writing pending, read before parking
	rest    []byte // what a short write left over
	p       []byte
	n       int
	err     error
	fn      func(fd uintptr) bool // built once, so that reads do not allocate
}

func newRawIO(c *net.TCPConn) (*rawIO, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawIO{conn: c, rc: rc}
	r.fn = r.step
	return r, nil
}

// send queues a request, b, to be written by the next Read, which then
// parks until the answer comes.
func (r *rawIO) send(b []byte) { r.pending, r.check = b, false }

// flush queues b to be written by the next Read, which then reads what
// may have come already before it parks.
func (r *rawIO) flush(b []byte) { r.pending, r.check = b, true }

// Read implements io.Reader for bufio.
func (r *rawIO) Read(p []byte) (int, error) {
	r.p = p
	for {
		r.n, r.err = 0, nil
		if err := r.rc.Read(r.fn); err != nil {
			return 0, err
		}
		if len(r.rest) > 0 {
			// The socket buffer took only part of the request: write the
			// rest the ordinary, blocking way.
			rest := r.rest
			r.rest = nil
			if _, err := r.conn.Write(rest); err != nil {
				return 0, err
			}
			continue
		}
		if r.err != nil {
			return 0, r.err
		}
		if r.n == 0 {
			return 0, io.EOF
		}
		return r.n, nil
	}
}

// step is the RawConn callback: it returns false to park until the socket
// is readable, true when it has a result.
func (r *rawIO) step(fd uintptr) bool {
	if b := r.pending; b != nil {
		r.pending = nil
		n, errno := rawSend(fd, b)
		switch {
		case errno == syscall.EAGAIN:
			r.rest = b
			return true
		case errno != 0:
			r.err = errno
			return true
		case n < len(b):
			r.rest = b[n:]
			return true
		}
		if !r.check {
			return false
		}
	}
	for {
		n, errno := rawRecv(fd, r.p)
		switch errno {
		case 0:
			r.n = n
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			r.err = errno
		}
		return true
	}
}
