package load

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The hot path's system calls go through RawSyscall. All of them act on
// non-blocking descriptors and return at once, so the runtime need not know
// about them; the ordinary wrappers call entersyscall, which wakes the
// runtime's sysmon thread from its deep sleep whenever the process was idle
// a moment before. A generator waiting on its server is idle between most
// responses, and those wake-ups, each a futex call and a context switch
// followed by sysmon's 20 µs polling, cost more CPU than the request.

func rawRead(fd uintptr, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(n), e
}

func rawTimerfdSettime(fd uintptr, spec *unix.ItimerSpec) unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	return e
}

// Sockets are read and written with recvfrom and sendto, not read and
// write: these go to the socket layer directly, past the file layer's
// checks and notifications.

func rawRecv(fd uintptr, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	return int(n), e
}

func rawSend(fd uintptr, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	return int(n), e
}
