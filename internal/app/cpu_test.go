package app

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPUOf runs f on one locked thread and returns the CPU time that
// thread used meanwhile.
func threadCPUOf(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &before)
	f()
	syscall.Getrusage(syscall.RUSAGE_THREAD, &after)
	return time.Duration(after.Utime.Nano()+after.Stime.Nano()) - time.Duration(before.Utime.Nano()+before.Stime.Nano())
}
