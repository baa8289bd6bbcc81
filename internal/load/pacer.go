package load

import (
	"fmt"
	"time"
)

// Pacer decides when each send is due. It is a pure function of the elapsed
// time and the number of hits so far, with no clock inside, so schedules are
// table-tested without sleeping. Rate zero is the closed loop: every hit is
// due at once and only the bounds stop it.
type Pacer struct {
	Rate     float64       // hits per second; 0 means closed loop
	Duration time.Duration // no hit is due at or after this; 0 means unbounded
	Max      int64         // at most this many hits; 0 means unbounded
}

// Due is when hit number hits (counted from zero) is scheduled, measured from
// the start. Hit i of an open loop is due at i/Rate exactly, so the schedule
// never drifts however long it runs.
func (p Pacer) Due(hits int64) time.Duration {
	if p.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(hits) * float64(time.Second) / p.Rate)
}

// Pace returns how long to wait from elapsed until hit number hits is due,
// and stop when that hit must not be sent at all.
func (p Pacer) Pace(elapsed time.Duration, hits int64) (wait time.Duration, stop bool) {
	if p.Max > 0 && hits >= p.Max {
		return 0, true
	}
	if p.Rate <= 0 {
		return 0, p.Duration > 0 && elapsed >= p.Duration
	}
	due := p.Due(hits)
	if p.Duration > 0 && due >= p.Duration {
		return 0, true
	}
	return max(0, due-elapsed), false
}

// Hits is the number of hits due before elapsed: the first hit index whose
// due time is at or after it.
func (p Pacer) Hits(elapsed time.Duration) int64 {
	if p.Rate <= 0 || elapsed <= 0 {
		return 0
	}
	n := int64(elapsed.Seconds() * p.Rate)
	// Float rounding can leave n one off either way; settle it on Due itself.
	for n > 0 && p.Due(n-1) >= elapsed {
		n--
	}
	for p.Due(n) < elapsed {
		n++
	}
	return n
}

func (p Pacer) String() string {
	if p.Rate <= 0 {
		return "closed loop"
	}
	return fmt.Sprintf("constant %g/s", p.Rate)
}
