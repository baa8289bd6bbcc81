package load

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The sleeper wakes a little before each deadline and spins the rest, so
// that sends leave on time although timer wake-ups land late by a varying
// amount (tens of microseconds in a VM). The spin window follows the
// observed wake-up lateness, within these bounds, so that an idle machine
// spends little CPU spinning and a busy one still sends on time. spinShare
// caps the window at a share of the interval between sends, so that
// spinning never takes more than that share of a CPU.
const (
	minSpin     = 2 * time.Microsecond
	maxSpin     = 250 * time.Microsecond
	initialSpin = 30 * time.Microsecond
	spinShare   = 0.1
)

// sleeper waits until a deadline with microsecond precision. Go's own timers
// round to whole milliseconds when the process is idle (the runtime's
// epoll_wait takes milliseconds), which would smear an open-loop schedule;
// a timerfd parked in the netpoller wakes at the hrtimer's precision
// instead, and the goroutine spins the last few microseconds.
type sleeper struct {
	f     *os.File
	rc    syscall.RawConn
	spec  unix.ItimerSpec
	armed bool
	err   error
	spinWindow
	buf [8]byte
	fn  func(fd uintptr) bool // built once, so that waiting does not allocate
}

// spinWindow is how long before a deadline a timer should wake, so that
// the rest is spun: late is a moving average of how late the timer fired;
// spin is the window derived from it.
type spinWindow struct {
	late, spin, maxSpin time.Duration
}

// newSpinWindow returns the window for a schedule with interval between
// sends.
func newSpinWindow(interval time.Duration) spinWindow {
	limit := min(maxSpin, time.Duration(spinShare*float64(interval)))
	return spinWindow{maxSpin: limit, late: initialSpin / 2, spin: min(initialSpin, limit)}
}

// newSleeper returns a sleeper for a schedule with interval between sends.
func newSleeper(interval time.Duration) (*sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	s := &sleeper{f: f, rc: rc, spinWindow: newSpinWindow(interval)}
	s.fn = s.step
	return s, nil
}

// step arms the timer on its first call, then reads the expiry; RawConn.Read
// parks the goroutine in the netpoller between calls.
func (s *sleeper) step(fd uintptr) bool {
	if !s.armed {
		s.armed = true
		if errno := rawTimerfdSettime(fd, &s.spec); errno != 0 {
			s.err = errno
			return true
		}
		return false
	}
	switch _, errno := rawRead(fd, s.buf[:]); errno {
	case 0:
	case unix.EAGAIN, unix.EINTR:
		return false
	default:
		s.err = errno
	}
	return true
}

// until returns once the clock reaches deadline, an offset from base, or
// with an error when the sleeper was closed meanwhile.
func (s *sleeper) until(base time.Time, deadline time.Duration) error {
	target := deadline - s.spin
	if d := target - time.Since(base); d > 0 {
		s.spec.Value = unix.NsecToTimespec(int64(d))
		s.armed, s.err = false, nil
		if err := s.rc.Read(s.fn); err != nil {
			return err
		}
		if s.err != nil {
			return fmt.Errorf("timerfd: %w", s.err)
		}
		s.adapt(time.Since(base) - target)
	}
	for time.Since(base) < deadline {
		runtime.Gosched()
	}
	return nil
}

// adapt folds one wake-up's lateness into the spin window: the average
// lateness plus half again, so that most wake-ups land before the deadline.
func (s *spinWindow) adapt(late time.Duration) {
	late = min(late, s.maxSpin)
	s.late += (late - s.late) / 8
	s.spin = min(max(s.late+s.late/2, minSpin), s.maxSpin)
}

// close wakes a goroutine blocked in until; it may be called from any
// goroutine, once.
func (s *sleeper) close() error {
	if err := s.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
