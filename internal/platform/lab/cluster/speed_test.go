package cluster

import (
	"testing"
	"time"
)

// TestSlowdown probes CPU 0: the first probe is the run's fastest, so no
// slowdown; once the fastest time on record is half what the CPU does now,
// the probe reads as about 100% slower, and the record is kept.
func TestSlowdown(t *testing.T) {
	l := &Lab{}
	s, err := l.slowdown([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if s != 0 {
		t.Errorf("first probe: slowdown %g, want 0", s)
	}
	got := l.fastest[0]
	if got <= 0 || got > 10*time.Millisecond {
		t.Fatalf("fastest probe on CPU 0 %v, want a few tens of microseconds", got)
	}
	half := got / 4 // well under anything the CPU can do, whatever its noise
	l.fastest[0] = half
	if s, err = l.slowdown([]int{0}); err != nil {
		t.Fatal(err)
	}
	if s < 1 {
		t.Errorf("with a record 4x faster than the CPU: slowdown %g, want at least 1", s)
	}
	if l.fastest[0] != half {
		t.Errorf("the record moved to %v: a slower probe must not replace it", l.fastest[0])
	}
	// Every CPU at once, as the host meter probes them.
	all, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := probeSpeed(all); err != nil || len(got) != len(all) {
		t.Errorf("probing %v at once: %v, %v", all, got, err)
	}
	if _, err := l.slowdown([]int{1 << 20}); err == nil {
		t.Error("probing a CPU that does not exist: no error")
	}
}
