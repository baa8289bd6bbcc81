package app

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// burnCPU keeps the CPU busy until the calling thread has used d of CPU
// time, so that the work costs the same CPU however contended the machine
// is (a wall-clock spin would cost less CPU when preempted).
func burnCPU(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	for ok {
		spin()
		var now time.Duration
		now, ok = threadCPU()
		if now-start >= d {
			return
		}
	}
}

// spinSink keeps the compiler from dropping spin's arithmetic.
var spinSink atomic.Uint64

// spin does a few hundred nanoseconds of arithmetic between clock reads.
func spin() {
	x := spinSink.Load()
	for i := uint64(0); i < 500; i++ {
		x = x*6364136223846793005 + i
	}
	spinSink.Store(x)
}

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
