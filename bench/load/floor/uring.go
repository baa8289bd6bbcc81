package main

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The few io_uring definitions the loop needs, from linux/io_uring.h.
const (
	opSend = 26
	opRecv = 27

	setupSingleIssuer = 1 << 12
	// setupDeferTaskrun runs completion work only when the loop asks for
	// completions, in batches, rather than interrupting it (Linux 6.1).
	setupDeferTaskrun = 1 << 13
	featSingleMmap    = 1 << 0
	enterGetEvents    = 1 << 0
	// recvPollFirst arms the wait at once instead of trying a read that
	// would find nothing: the answer is never there yet.
	recvPollFirst = 1 << 0

	offSQEs = 0x10000000
)

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	_                                                                      [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, _ uint32
		_                                                           uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, _ uint32
		_                                                           uint64
	}
}

type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, opFlags  uint32
	userData      uint64
	_             [3]uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring: its submission and completion queues, mapped.
type ring struct {
	fd                     int
	sqTail, sqMask         *uint32
	sqArray                []uint32
	sqes                   []sqe
	cqHead, cqTail, cqMask *uint32
	cqes                   []cqe
	tail, pending          uint32 // the loop's own submission tail, and what it has not yet submitted
}

func newRing(entries uint32) (*ring, error) {
	p := uringParams{flags: setupSingleIssuer | setupDeferTaskrun}
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %v (the floor's io_uring loop needs Linux 6.1)", e)
	}
	if p.features&featSingleMmap == 0 {
		unix.Close(int(fd))
		return nil, fmt.Errorf("io_uring without a single ring mapping (Linux before 5.4)")
	}
	r := &ring{fd: int(fd)}
	size := max(int(p.sqOff.array)+int(p.sqEntries)*4, int(p.cqOff.cqes)+int(p.cqEntries)*int(unsafe.Sizeof(cqe{})))
	rings, err := unix.Mmap(r.fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	sqes, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&rings[off])) }
	r.sqTail, r.sqMask = at(p.sqOff.tail), at(p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(at(p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = at(p.cqOff.head), at(p.cqOff.tail), at(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&rings[p.cqOff.cqes])), p.cqEntries)
	r.tail = *r.sqTail
	return r, nil
}

// queue fills the next submission entry; it is submitted by the next wait.
func (r *ring) queue(s sqe) {
	i := r.tail & *r.sqMask
	r.sqArray[i] = i
	r.sqes[i] = s
	r.tail++
	r.pending++
}

// wait submits what was queued and waits until at least one completion is
// there. It blocks in a raw system call, as epollLoop does.
func (r *ring) wait() error {
	atomic.StoreUint32(r.sqTail, r.tail)
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), 1, enterGetEvents, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		r.pending = 0
		return nil
	}
}

// uringLoop keeps one send and one receive queued per connection. A
// completion's user data is the connection's index, doubled, plus one for
// a receive.
func uringLoop(cs []*conn, req []byte, d time.Duration) (int64, error) {
	// Each connection has at most a send and a receive in flight.
	r, err := newRing(uint32(2 * len(cs)))
	if err != nil {
		return 0, err
	}
	defer unix.Close(r.fd)
	send := func(i int) {
		r.queue(sqe{opcode: opSend, fd: int32(cs[i].fd), addr: uint64(uintptr(unsafe.Pointer(&req[0]))), len: uint32(len(req)), userData: uint64(i) << 1})
	}
	recv := func(i int) {
		c := cs[i]
		r.queue(sqe{opcode: opRecv, ioprio: recvPollFirst, fd: int32(c.fd), addr: uint64(uintptr(unsafe.Pointer(&c.buf[c.n]))),
			len: uint32(len(c.buf) - c.n), userData: uint64(i)<<1 | 1})
	}
	for i := range cs {
		send(i)
		recv(i)
	}
	var done int64
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := r.wait(); err != nil {
			return done, err
		}
		head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
		for ; head != tail; head++ {
			e := r.cqes[head&*r.cqMask]
			i := int(e.userData >> 1)
			if e.userData&1 == 0 {
				if int(e.res) != len(req) {
					return done, fmt.Errorf("send: %d of %d bytes (negative: an errno)", e.res, len(req))
				}
				continue
			}
			if e.res <= 0 {
				return done, fmt.Errorf("recv: %d (negative: an errno)", e.res)
			}
			if cs[i].answered(int(e.res)) {
				done++
				send(i)
			}
			recv(i)
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return done, nil
}
