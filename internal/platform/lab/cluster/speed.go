package cluster

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A shared host can slow the lab's CPUs without any counter the guest can
// read showing it: a busy hyperthread sibling, a lower clock, a neighbour
// thrashing the shared caches. /proc/stat's steal time sees only the
// hypervisor's own preemption. One capacity run here found every
// component's CPU per request 50-70% above the same rate's earlier trials
// for two minutes, with steal at 0.01-0.1 cores: the trials failed the SLO
// and were taken as evidence. So the host meter also times a fixed piece
// of work on each of the lab's CPUs, before and after the window, and
// compares it with the fastest time that CPU has shown this run.

// speedTries and speedIters size the probe: the fastest of speedTries
// runs of speedIters steps, about 30 µs each, spread over speedSpan, on
// every CPU at once: 1.5 ms of work per CPU in 50 ms. A try that a lab
// task or an interrupt cut into is slower and is dropped by taking the
// fastest; a CPU slowed for the whole span is slower in every try.
const (
	speedTries = 48
	speedIters = 1 << 13
	speedSpan  = 50 * time.Millisecond
)

// speedTable is the probe's working set: small enough to stay in the
// core's own caches, so the probe times the core, and read in an order
// the arithmetic decides, so that neither the compiler nor the prefetcher
// can skip it.
var speedTable = func() []uint64 {
	t := make([]uint64, 1<<12)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range t {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		t[i] = x
	}
	return t
}()

// speedSink keeps the probe's result alive. Probes of several CPUs run at
// once, so it is written atomically: once per try, nothing to the timing.
var speedSink atomic.Uint64

func speedWork() {
	x := uint64(88172645463325252)
	mask := uint64(len(speedTable) - 1)
	for range speedIters {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		x += speedTable[x&mask]
	}
	speedSink.Add(x)
}

// probeSpeed times the work on each CPU: the fastest try, per CPU. Each
// CPU has a thread of its own, pinned to it (pinThread). The
// tries are spread over speedSpan: a shared host's CPU speed flickers by
// a fifth from one millisecond to the next, and a slowdown that matters
// to a measurement lasts longer than that.
func probeSpeed(cpus []int) (map[int]time.Duration, error) {
	type answer struct {
		cpu  int
		best time.Duration
		err  error
	}
	ch := make(chan answer, len(cpus))
	for _, c := range cpus {
		go func() {
			if err := pinThread(c); err != nil {
				ch <- answer{cpu: c, err: fmt.Errorf("CPU speed: %w", err)}
				return
			}
			best := time.Duration(1<<63 - 1)
			for i := range speedTries {
				if i > 0 {
					time.Sleep(speedSpan / speedTries)
				}
				t := time.Now()
				speedWork()
				best = min(best, time.Since(t))
			}
			ch <- answer{cpu: c, best: best}
		}()
	}
	out := map[int]time.Duration{}
	var err error
	for range cpus {
		a := <-ch
		out[a.cpu] = a.best
		if a.err != nil && err == nil {
			err = a.err
		}
	}
	return out, err
}

// pinThread locks the calling goroutine to its thread and pins the thread
// to CPU c. The goroutine must never unlock it: the thread then ends with
// the goroutine rather than going back to the runtime with its affinity
// changed.
func pinThread(c int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(c)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pinning to CPU %d: %w", c, err)
	}
	return nil
}

// slowdown probes the CPUs and returns how much slower the slowest of
// them ran than its fastest time so far this run (0.3 is 30% slower);
// every probe also lowers the fastest times it beats.
func (l *Lab) slowdown(cpus []int) (float64, error) {
	got, err := probeSpeed(cpus)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fastest == nil {
		l.fastest = map[int]time.Duration{}
	}
	worst := 0.0
	for c, d := range got {
		if f, ok := l.fastest[c]; !ok || d < f {
			l.fastest[c] = d
		}
		worst = max(worst, float64(d)/float64(l.fastest[c])-1)
	}
	return worst, nil
}
