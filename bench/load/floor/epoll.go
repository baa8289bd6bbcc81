package main

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollLoop waits for readiness with epoll, then reads and writes.
func epollLoop(cs []*conn, req []byte, d time.Duration) (int64, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, err
	}
	defer unix.Close(ep)
	for i, c := range cs {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return 0, err
		}
		if _, e := rawSend(c.fd, req); e != 0 {
			return 0, e
		}
	}
	var done int64
	events := make([]unix.EpollEvent, 256)
	for end := time.Now().Add(d); time.Now().Before(end); {
		k, err := rawEpollWait(ep, events, 100)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		for _, ev := range events[:k] {
			c := cs[ev.Fd]
			m, e := rawRecv(c.fd, c.buf[c.n:])
			if e == unix.EAGAIN {
				continue
			}
			if e != 0 || m == 0 {
				return done, fmt.Errorf("read: %v (%d bytes)", e, m)
			}
			if !c.answered(m) {
				continue
			}
			done++
			if _, e := rawSend(c.fd, req); e != 0 {
				return done, e
			}
		}
	}
	return done, nil
}

// rawRecv and rawSend bypass the runtime's system call bookkeeping, as
// meshbench's engine does (internal/load/rawsys.go), and go to the socket
// layer directly, past the file layer's checks: the descriptors are
// non-blocking, and the bookkeeping wakes the runtime's monitor thread
// whenever the process was idle a moment before, which would put that
// thread's cost on the floor.
//
// rawEpollWait blocks in a raw system call too, which a Go program may do
// here only because the floor is one goroutine on a locked thread: through
// the runtime's path, the monitor thread takes the P of a call blocked
// over 20 µs and starts another thread to spin for work, about 1 µs a
// request on this loop (bench/load measured it at 32 connections).
func rawRecv(fd int, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	return int(n), e
}

func rawSend(fd int, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	return int(n), e
}

func rawEpollWait(ep int, evs []unix.EpollEvent, ms int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
