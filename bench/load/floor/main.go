// Command floor is the least a closed-loop HTTP/1.1 keep-alive client can
// cost on this machine: one thread, one epoll set, a request written the
// moment its connection's answer is complete, the answer's end found by
// its Content-Length, and nothing else: no timing, no histogram, no
// parser worth the name. bench/load runs it beside the real generators so
// that their CPU per request can be read against what the kernel's TCP
// and wake-up work alone costs. It is a measuring stick, not a client: it
// handles only answers with a Content-Length, and stops at the first
// error.
//
//	floor -c 32 -d 5s http://127.0.0.1:8080/
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
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: floor -c N -d D http://host:port/path")
		os.Exit(2)
	}
	n, err := run(flag.Arg(0), *conns, *d)
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

func run(rawURL string, conns int, d time.Duration) (int64, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return 0, fmt.Errorf("want an http:// URL, got %q", rawURL)
	}
	path := u.RequestURI()
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
	// The loop is one thread, as wrk -t1 is.
	runtime.LockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, err
	}
	defer unix.Close(ep)
	cs := make([]*conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			return 0, err
		}
		f, err := c.(*net.TCPConn).File() // a blocking duplicate, made non-blocking below
		c.Close()
		if err != nil {
			return 0, err
		}
		fd := int(f.Fd())
		defer f.Close()
		if err := unix.SetNonblock(fd, true); err != nil {
			return 0, err
		}
		cs[i] = &conn{fd: fd, buf: make([]byte, 32<<10)}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return 0, err
		}
		if _, err := unix.Write(fd, req); err != nil {
			return 0, err
		}
	}
	var done int64
	events := make([]unix.EpollEvent, 256)
	for end := time.Now().Add(d); time.Now().Before(end); {
		k, err := unix.EpollWait(ep, events, 100)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		for _, ev := range events[:k] {
			c := cs[ev.Fd]
			m, err := unix.Read(c.fd, c.buf[c.n:])
			if err == unix.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				return done, fmt.Errorf("read: %v (%d bytes)", err, m)
			}
			c.n += m
			if !complete(c.buf[:c.n]) {
				continue
			}
			c.n = 0
			done++
			if _, err := unix.Write(c.fd, req); err != nil {
				return done, err
			}
		}
	}
	return done, nil
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
