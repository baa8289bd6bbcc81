package load

import (
	"math"
	"testing"
	"time"
)

// FuzzSchedule claims every hit of an open-loop schedule, uniform or
// Poisson, at any rate, seed, warm-up and request bound: the hits come in
// the order they are due, none before the start, the warm-up's before the
// measured phase and the measured ones at or after its start, exactly the
// requests asked for measured.
func FuzzSchedule(f *testing.F) {
	f.Add(1000.0, uint64(1), uint16(100), uint16(50), true)
	f.Add(3.0, uint64(0), uint16(0), uint16(1), false)
	f.Add(99999.5, uint64(1<<63), uint16(7), uint16(1000), true)
	f.Fuzz(func(t *testing.T, rate float64, seed uint64, warmupMs, requests uint16, poisson bool) {
		if math.IsNaN(rate) || rate < 0.1 || rate > 1e5 || requests == 0 || requests > 2000 || warmupMs > 200 {
			t.Skip()
		}
		o := Options{Rate: rate, Warmup: time.Duration(warmupMs) * time.Millisecond, Requests: int64(requests)}
		if poisson {
			o.Arrivals, o.Seed = ArrivalsPoisson, seed
		}
		s := newSchedule(&o, 0)
		var last time.Duration
		var measured int64
		for i := 0; ; i++ {
			if i > int(2*rate*o.Warmup.Seconds())+int(requests)+100 {
				t.Fatalf("more than %d hits for a warm-up of %v and %d requests at %g/s", i, o.Warmup, requests, rate)
			}
			tk, ok := s.claim(0)
			if !ok {
				break
			}
			switch {
			case tk.intended < last:
				t.Fatalf("hit %d due at %v, before the one before it (%v)", i, tk.intended, last)
			case tk.intended < 0:
				t.Fatalf("hit %d due at %v, before the start", i, tk.intended)
			case tk.warmup && tk.intended >= s.measured():
				t.Fatalf("warm-up hit %d due at %v, in the measured phase from %v", i, tk.intended, s.measured())
			case !tk.warmup && tk.intended < s.measured():
				t.Fatalf("measured hit %d due at %v, before the measured phase's start %v", i, tk.intended, s.measured())
			case !tk.warmup && measured == 0 && tk.intended < o.Warmup:
				t.Fatalf("measured hit %d due at %v, in the warm-up of %v", i, tk.intended, o.Warmup)
			}
			last = tk.intended
			if !tk.warmup {
				measured++
			}
		}
		if measured != int64(requests) {
			t.Fatalf("%d measured hits, want %d", measured, requests)
		}
	})
}
