// Command floor is the least a closed-loop HTTP/1.1 keep-alive client can
// cost on this machine: one thread, a request written the moment its
// connection's answer is complete, the answer's end found by its
// Content-Length, and nothing else: no timing, no histogram, no parser
// worth the name. bench/load runs it beside the real generators so that
// their CPU per request can be read against what the kernel's TCP and
// wake-up work alone costs. It is a measuring stick, not a client: it
// handles only answers with a Content-Length, and stops at the first
// error.
//
// It waits in one of two ways, so that the floor is not one kernel
// interface's cost: -io epoll waits for readiness and then reads and
// writes, two system calls a request, the way wrk does; -io uring hands
// its reads and writes to io_uring and waits for their completions, many
// requests to a system call.
//
//	floor -c 32 -d 5s [-io uring] http://127.0.0.1:8080/
//
// It prints "N requests" when done.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	conns := flag.Int("c", 32, "connections")
	d := flag.Duration("d", 5*time.Second, "duration")
	io := flag.String("io", "epoll", "how to wait: epoll (readiness, then read and write) or uring (io_uring completions)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: floor -c N -d D http://host:port/path")
		os.Exit(2)
	}
	u, err := url.Parse(flag.Arg(0))
	if err != nil || u.Scheme != "http" {
		fmt.Fprintf(os.Stderr, "floor: want an http:// URL, got %q\n", flag.Arg(0))
		os.Exit(2)
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
	loop := map[string]func([]*conn, []byte, time.Duration) (int64, error){"epoll": epollLoop, "uring": uringLoop}[*io]
	if loop == nil {
		fmt.Fprintf(os.Stderr, "floor: -io %q: want epoll or uring\n", *io)
		os.Exit(2)
	}
	// The loop is one thread, as wrk -t1 is.
	runtime.LockOSThread()
	cs, closeAll, err := dialAll(u.Host, *conns)
	var n int64
	if err == nil {
		n, err = loop(cs, req, *d)
		closeAll()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Printf("%d requests\n", n)
}

// conn is one connection: its descriptor and the answer read so far.
type conn struct {
	fd  int
	buf []byte
	n   int
}

// dialAll opens conns non-blocking connections to host and returns their
// descriptors, and a function that closes them.
func dialAll(host string, conns int) ([]*conn, func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	cs := make([]*conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", host)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		f, err := c.(*net.TCPConn).File() // a blocking duplicate, made non-blocking below
		c.Close()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		fd := int(f.Fd())
		if err := unix.SetNonblock(fd, true); err != nil {
			closeAll()
			return nil, nil, err
		}
		cs[i] = &conn{fd: fd, buf: make([]byte, 32<<10)}
	}
	return cs, closeAll, nil
}

// answered adds m bytes read to c's answer and says whether it is whole;
// a whole answer is taken off, ready for the next.
func (c *conn) answered(m int) bool {
	c.n += m
	if !complete(c.buf[:c.n]) {
		return false
	}
	c.n = 0
	return true
}

var (
	headEnd = []byte("\r\n\r\n")
	// The two spellings servers use; the floor does not fold case, which
	// would cost what it means to leave out.
	contentLength = [][]byte{[]byte("\r\nContent-Length:"), []byte("\r\ncontent-length:")}
)

// complete says whether b holds a whole answer: a head and as many body
// bytes as its Content-Length says.
func complete(b []byte) bool {
	h := bytes.Index(b, headEnd)
	if h < 0 {
		return false
	}
	var rest []byte
	for _, name := range contentLength {
		if i := bytes.Index(b[:h], name); i >= 0 {
			rest = b[i+len(name) : h]
			break
		}
	}
	if rest == nil {
		return false
	}
	var length int
	for _, ch := range bytes.TrimLeft(rest, " ") {
		if ch < '0' || ch > '9' {
			break
		}
		length = length*10 + int(ch-'0')
	}
	return len(b) >= h+len(headEnd)+length
}
