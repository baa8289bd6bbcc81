package load

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/http1wire"
)

// loop drives a share of a run's plain-TCP HTTP/1.1 connections from one
// goroutine, as a wrk thread does: one epoll set waits for all of them,
// each response is framed by a ResponseScanner as its bytes come, and each
// connection sends its next request when the schedule says. A goroutine
// per connection cost a scheduler hand-off per response (park, make
// ready, run): on loopback, about a third of the engine's user CPU.
//
// It waits in one of two ways. When the program has a P beyond its loops
// (SpareP), each loop waits in a raw epoll_wait and keeps its P, as a C
// client's thread would: parking in the netpoller costs a round of the
// scheduler (hand the P back, poll, wake, reschedule) each time the loop
// runs out of responses. Otherwise it parks in the netpoller,
// which watches the epoll set's own descriptor, so that the P is free for
// the rest of the program (an in-process server, the context watcher):
// holding every P would starve them. A loop that keeps its P leaves its
// epoll set out of the netpoller: there, every response that made the set
// ready would also wake the thread that waits in the netpoller for the
// program's next timer (a progress line's ticker, say), a thread switch
// per response on the loop's CPU. Reads and writes are raw system calls
// either way (rawsys.go).
type loop struct {
	ep, timer       int                   // the epoll set; a timerfd for the next deadline when parked
	epf             *os.File              // ep in the netpoller; nil when hold
	eprc            syscall.RawConn       // parks on ep in the netpoller
	parkFn          func(fd uintptr) bool // built once, so that parking does not allocate
	k               int                   // events parkFn took
	wakeMu          sync.Mutex
	wake            int // an eventfd that abort writes; guarded by wakeMu
	sa              unix.Sockaddr
	family          int
	req             []byte
	head, keepAlive bool
	connRequests    int  // requests a connection carries; 0: no limit
	hold            bool // wait keeping the P
	timeout         time.Duration
	conns           []*lconn
	active          int // connections whose schedule has not ended
	// queue is a ring of the connections that hold an open-loop ticket
	// not yet due, in due order: qlen of them from qhead.
	queue       []*lconn
	qhead, qlen int
	// failed are the connections whose request failed since the last
	// wait, to go on with; spare is the other buffer of the two.
	failed, spare []*lconn
	armed         time.Duration // when the timerfd fires; 0 when disarmed
	nextSweep     time.Duration
	spin          spinWindow
	rec           *recorder
	s             *schedule // the run's, set by run
	base          time.Time
	events        [128]unix.EpollEvent
	buf           [8]byte
}

const (
	// Epoll keys past the connections' indexes.
	wakeKey  = -1
	timerKey = -2
)

// lconn is one connection of a loop.
type lconn struct {
	key     int32
	fd      int // -1 when closed
	state   lstate
	reused  bool // it carried a response before the request in flight
	retried bool // the request in flight was sent again on a fresh connection
	got     bool // bytes came for the request in flight
	carried int  // responses the open connection carried
	t       ticket
	sent    time.Duration
	out     []byte // request bytes the socket has not taken yet
	sc      http1wire.ResponseScanner
	buf     []byte
	n       int // buf[:n] holds an incomplete line
}

type lstate uint8

const (
	idle       lstate = iota // no request in flight
	queued                   // open loop: holds a ticket not yet due
	connecting               // a request waits for the connection
	inflight
	finished // the schedule ended for it
)

func newLoop(o *Options, t target, req []byte, conns int, hold bool, rec *recorder) (*loop, error) {
	addr, err := net.ResolveTCPAddr("tcp", t.addr)
	if err != nil {
		return nil, err
	}
	l := &loop{ep: -1, wake: -1, timer: -1, req: req, head: o.Method == "HEAD", keepAlive: !o.NoKeepAlive,
		connRequests: o.ConnRequests, hold: hold, timeout: o.Timeout, rec: rec}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To16())
		l.sa, l.family = sa, unix.AF_INET6
	}
	if o.Rate > 0 {
		l.spin = newSpinWindow(time.Duration(float64(time.Second) / o.Rate))
	}
	if err := l.open(); err != nil {
		l.close()
		return nil, err
	}
	for i := range conns {
		l.conns = append(l.conns, &lconn{key: int32(i), fd: -1, buf: make([]byte, readBufferSize)})
	}
	l.queue = make([]*lconn, conns)
	return l, nil
}

func (l *loop) open() error {
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll: %w", err)
	}
	if !l.hold {
		// Non-blocking before NewFile, so that the file is pollable.
		if err := unix.SetNonblock(l.ep, true); err != nil {
			return fmt.Errorf("epoll: %w", err)
		}
		l.epf = os.NewFile(uintptr(l.ep), "epoll")
		if l.eprc, err = l.epf.SyscallConn(); err != nil {
			return fmt.Errorf("epoll: %w", err)
		}
		l.parkFn = func(uintptr) bool {
			k, errno := rawEpollWait(l.ep, l.events[:], 0)
			l.k = k
			return k > 0 || errno != 0 && errno != unix.EINTR
		}
	}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	if l.timer, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return fmt.Errorf("timerfd: %w", err)
	}
	for _, k := range []struct{ fd, key int }{{l.wake, wakeKey}, {l.timer, timerKey}} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(k.key)}
		if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, k.fd, &ev); err != nil {
			return fmt.Errorf("epoll: %w", err)
		}
	}
	return nil
}

func (l *loop) stats() *recorder { return l.rec }

// connect opens every connection before the clock starts. One that fails
// is dialled again by its first request, which records the error.
func (l *loop) connect(ctx context.Context) {
	pending := 0
	for _, c := range l.conns {
		if err := l.dial(c); err != nil {
			l.rec.unopen(err)
			continue
		}
		c.state = connecting
		pending++
	}
	defer func() {
		for _, c := range l.conns {
			if c.state == connecting {
				c.state = idle
				l.drop(c)
			}
		}
	}()
	if pending == 0 {
		return
	}
	stop := context.AfterFunc(ctx, l.abort)
	defer stop()
	if l.timeout > 0 {
		if l.setTimer(l.timeout) != nil {
			return
		}
		defer l.setTimer(0)
	}
	for pending > 0 {
		k, err := l.block()
		if err != nil {
			return
		}
		for _, ev := range l.events[:k] {
			if ev.Fd == wakeKey || ev.Fd == timerKey {
				return // cancelled, or out of time
			}
			if c := l.conns[ev.Fd]; c.state == connecting {
				c.state = idle
				pending--
				if err := l.connected(c); err != nil {
					l.rec.unopen(err)
					l.drop(c)
				}
			}
		}
	}
}

// run drives the connections until the schedule ends for all of them, or
// stopped.
func (l *loop) run(_ context.Context, s *schedule, base time.Time, stopped *atomic.Bool) {
	l.s, l.base = s, base
	defer func() {
		for _, c := range l.conns {
			l.drop(c)
		}
	}()
	now := time.Since(l.base)
	l.active = len(l.conns)
	for _, c := range l.conns {
		l.next(c, now)
	}
	for l.active > 0 && !stopped.Load() {
		k, err := l.wait(now)
		if stopped.Load() {
			return // cancelled: what is in flight is not recorded
		}
		now = time.Since(l.base)
		if err != nil {
			l.failAll(now, err)
			return
		}
		for _, ev := range l.events[:k] {
			switch ev.Fd {
			case wakeKey:
				return
			case timerKey:
				_, _ = rawRead(uintptr(l.timer), l.buf[:])
				if l.qlen > 0 {
					l.spin.adapt(now - l.armed)
				}
				l.armed = 0
				continue
			}
			c := l.conns[ev.Fd]
			switch c.state {
			case connecting:
				if err := l.connected(c); err != nil {
					l.fail(c, err)
					continue
				}
				if !c.t.warmup {
					l.rec.dials++
				}
				c.state = inflight
				l.write(c)
			case inflight:
				if ev.Events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
					l.write(c)
				}
				if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.state == inflight {
					l.read(c)
				}
			default:
				// A connection with nothing in flight has nothing to read:
				// the server closed it, or is out of step.
				l.drop(c)
			}
		}
		if l.s.open {
			now = l.sendDue()
		}
		if l.timeout > 0 && now >= l.nextSweep {
			l.sweep(now)
		}
		// Those that fail again now go on in the next round.
		failed := l.failed
		l.failed = l.spare[:0]
		for _, c := range failed {
			l.next(c, now)
		}
		l.spare = failed[:0]
	}
}

// wait waits for events until the next deadline: the first queued
// open-loop send, less the spin window, or the next timeout sweep. Within
// the window it only polls, so that the send leaves on time, and so it
// does when failed connections wait to go on.
func (l *loop) wait(now time.Duration) (int, error) {
	var wake time.Duration // 0: none
	if l.qlen > 0 {
		wake = max(1, l.queue[l.qhead].t.intended-l.spin.spin)
	}
	if l.timeout > 0 && (wake == 0 || l.nextSweep < wake) {
		wake = max(1, l.nextSweep)
	}
	if len(l.failed) > 0 || wake > 0 && wake <= now {
		return l.poll(0)
	}
	if wake > 0 && l.armed != wake {
		if err := l.setTimer(max(wake-time.Since(l.base), time.Microsecond)); err != nil {
			return 0, err
		}
		l.armed = wake
	}
	return l.block()
}

// block waits for events with no limit of its own: the timerfd and the
// wake eventfd end it, and the runtime's preemption signal too when it
// keeps the P.
func (l *loop) block() (int, error) {
	if l.hold {
		return l.poll(-1)
	}
	return l.park()
}

// poll waits up to msec (-1: no limit) in a raw epoll_wait, keeping the
// P; an interrupted wait returns no events.
func (l *loop) poll(msec int) (int, error) {
	k, errno := rawEpollWait(l.ep, l.events[:], msec)
	if errno != 0 && errno != unix.EINTR {
		return 0, errno
	}
	return k, nil
}

// park waits for events in the netpoller, its P free meanwhile.
func (l *loop) park() (int, error) {
	l.k = 0
	if err := l.eprc.Read(l.parkFn); err != nil {
		return 0, err
	}
	return l.k, nil
}

// setTimer arms the timerfd to fire in d, or disarms it when d is 0.
func (l *loop) setTimer(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if errno := rawTimerfdSettime(uintptr(l.timer), &spec); errno != 0 {
		return fmt.Errorf("timerfd: %w", errno)
	}
	return nil
}

// sendDue sends the queued tickets that are due, and returns the time.
func (l *loop) sendDue() time.Duration {
	now := time.Since(l.base)
	for l.qlen > 0 && l.queue[l.qhead].t.intended <= now {
		c := l.queue[l.qhead]
		l.qhead = (l.qhead + 1) % len(l.queue)
		l.qlen--
		l.send(c)
		now = time.Since(l.base)
	}
	return now
}

// next claims c's next ticket and sends it when due.
func (l *loop) next(c *lconn, now time.Duration) {
	t, ok := l.s.claim(now)
	if !ok {
		c.state = finished
		l.active--
		return
	}
	c.t, c.retried = t, false
	if l.s.open && t.intended > now {
		c.state = queued
		l.queue[(l.qhead+l.qlen)%len(l.queue)] = c
		l.qlen++
		return
	}
	l.send(c)
}

// send sends c's ticket, dialling first if its connection is closed.
func (l *loop) send(c *lconn) {
	c.sent = time.Since(l.base)
	if !l.s.open {
		c.t.intended = c.sent
	}
	l.start(c)
}

// start writes the request, or dials for it.
func (l *loop) start(c *lconn) {
	c.got, c.n = false, 0
	if c.fd >= 0 {
		// A kept connection's scanner is between responses already.
		c.reused = true
		c.state = inflight
		l.write(c)
		return
	}
	c.reused = false
	c.sc.Reset()
	if err := l.dial(c); err != nil {
		l.fail(c, err)
		return
	}
	c.state = connecting
}

// dial starts a non-blocking connect; the connection is watched for
// writable (connected) and readable.
func (l *loop) dial(c *lconn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, l.sa); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return err
	}
	c.fd, c.carried = fd, 0
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: c.key}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.drop(c)
		return err
	}
	return nil
}

// connected reads the outcome of c's connect.
func (l *loop) connected(c *lconn) error {
	errno, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err
	}
	if errno != 0 {
		return syscall.Errno(errno)
	}
	l.watch(c, unix.EPOLLIN)
	return nil
}

// watch sets the events c is watched for.
func (l *loop) watch(c *lconn, events uint32) {
	ev := unix.EpollEvent{Events: events, Fd: c.key}
	_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &ev)
}

// write writes the request, or what the socket did not take of it last
// time; a request bigger than the socket's buffer waits for writable.
func (l *loop) write(c *lconn) {
	b := c.out
	if b == nil {
		b = l.req
	}
	for len(b) > 0 {
		n, errno := rawSend(uintptr(c.fd), b)
		switch errno {
		case 0:
			b = b[n:]
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if c.out == nil {
				l.watch(c, unix.EPOLLIN|unix.EPOLLOUT)
			}
			c.out = b
			return
		}
		l.fail(c, errno)
		return
	}
	if c.out != nil {
		c.out = nil
		l.watch(c, unix.EPOLLIN)
	}
}

// read takes what came on c, and completes its request when the response
// is whole.
func (l *loop) read(c *lconn) {
	m, errno := rawRecv(uintptr(c.fd), c.buf[c.n:])
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return
	case errno != 0:
		l.fail(c, errno)
		return
	case m == 0:
		done, err := c.sc.EOF(c.n > 0)
		if !done {
			l.fail(c, err)
			return
		}
		status, _ := c.sc.Status()
		l.complete(c, status, false)
		return
	}
	c.got = true
	c.n += m
	used, done, err := c.sc.Scan(c.buf[:c.n], l.head)
	switch {
	case err != nil:
		l.fail(c, err)
	case done:
		status, keep := c.sc.Status()
		// Bytes past the response mean the stream is out of step.
		l.complete(c, status, keep && used == c.n)
	case used == 0 && c.n == len(c.buf):
		l.fail(c, protocolError("response line longer than %d bytes", len(c.buf)))
	default:
		c.n = copy(c.buf, c.buf[used:c.n])
	}
}

// complete records c's request answered, and goes on to its next.
func (l *loop) complete(c *lconn, status int, keep bool) {
	now := time.Since(l.base)
	var err error
	if l.timeout > 0 && now-c.sent > l.timeout {
		err = errTimeout
	}
	if !c.t.warmup {
		l.rec.record(c.t.intended, c.sent, now, status, err)
	}
	c.carried++
	if !keep || !l.keepAlive || l.connRequests > 0 && c.carried >= l.connRequests {
		l.drop(c)
	}
	c.state = idle
	l.next(c, now)
}

// fail ends c's request in flight with err, closing its connection. A
// reused connection that failed before any byte came back may have been
// closed by the server as the request went out: like net/http, the
// request is sent once more, on a fresh connection.
func (l *loop) fail(c *lconn, err error) {
	l.drop(c)
	if c.reused && !c.got && !c.retried && noResponse(err) {
		c.retried = true
		l.start(c)
		return
	}
	if !c.t.warmup {
		l.rec.record(c.t.intended, c.sent, time.Since(l.base), 0, err)
	}
	// Its next request waits for the next round of the loop: a failure
	// can come at once (a refused connect), and going on from here would
	// recurse, request after failed request, without ever waiting.
	c.state = idle
	l.failed = append(l.failed, c)
}

// failAll ends every request in flight when the loop itself failed.
func (l *loop) failAll(now time.Duration, err error) {
	for _, c := range l.conns {
		if c.state == inflight || c.state == connecting {
			l.drop(c)
			if !c.t.warmup {
				l.rec.record(c.t.intended, c.sent, now, 0, err)
			}
		}
	}
}

// sweep times out the requests sent more than the timeout ago. It runs
// every eighth of the timeout, so a stuck request fails between one and
// 1.125 timeouts after it was sent.
func (l *loop) sweep(now time.Duration) {
	l.nextSweep = now + l.timeout/8
	for _, c := range l.conns {
		if (c.state == inflight || c.state == connecting) && now-c.sent > l.timeout {
			c.retried = true // a timeout is not retried
			l.fail(c, errTimeout)
		}
	}
}

// drop closes c's connection; its next request dials a new one.
func (l *loop) drop(c *lconn) {
	if c.fd >= 0 {
		unix.Close(c.fd) // closing also takes it out of the epoll set
		c.fd = -1
	}
	c.out = nil
}

// abort wakes the loop from another goroutine, to stop it.
func (l *loop) abort() {
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if l.wake >= 0 {
		one := [8]byte{1}
		_, _ = unix.Write(l.wake, one[:])
	}
}

// close releases the loop's descriptors, once run has returned or when it
// never ran.
func (l *loop) close() {
	for _, c := range l.conns {
		l.drop(c)
	}
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if l.epf != nil {
		l.epf.Close()
		l.epf, l.ep = nil, -1
	}
	for _, fd := range []*int{&l.ep, &l.wake, &l.timer} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

func rawEpollWait(ep int, evs []unix.EpollEvent, msec int) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}
