package load

import (
	"slices"
	"testing"
	"time"
)

// TestScheduleSpreadsSends simulates connections that each claim a send as
// soon as they are free: the claimed times must be evenly spaced across
// the whole pool, with each connection on its own offset and no two sends
// at once, however many connections there are.
func TestScheduleSpreadsSends(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rate  float64
		conns int
	}{
		{name: "more connections than sends per interval", rate: 1000, conns: 32},
		{name: "few connections", rate: 2000, conns: 3},
		{name: "one connection", rate: 100, conns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(&Options{Rate: tt.rate, Duration: time.Second}, 0)
			interval := time.Duration(float64(time.Second) / tt.rate)
			// Every connection is idle at the start and claims once; then
			// each claims its next when its send is due (responses are
			// instant), in order of time, as the engine's goroutines do.
			next := make([]time.Duration, tt.conns)
			var all []time.Duration
			perConn := make([][]time.Duration, tt.conns)
			for c := range next {
				tk, ok := s.claim(0)
				if !ok {
					t.Fatal("schedule over at the start")
				}
				next[c] = tk.intended
			}
			for {
				c := slices.Index(next, slices.Min(next))
				if next[c] == time.Hour {
					break
				}
				all = append(all, next[c])
				perConn[c] = append(perConn[c], next[c])
				tk, ok := s.claim(next[c])
				if !ok {
					next[c] = time.Hour
					continue
				}
				next[c] = tk.intended
			}
			if want := int(tt.rate); len(all) != want {
				t.Fatalf("%d sends in 1s at %g/s, want %d", len(all), tt.rate, want)
			}
			for i := 1; i < len(all); i++ {
				if gap := all[i] - all[i-1]; gap < interval-time.Microsecond || gap > interval+time.Microsecond {
					t.Fatalf("gap %v between sends %d and %d, want %v: a burst", gap, i-1, i, interval)
				}
			}
			offsets := map[time.Duration]bool{}
			for c, times := range perConn {
				if len(times) == 0 {
					continue
				}
				offsets[times[0]] = true
				for i := 1; i < len(times); i++ {
					if gap := times[i] - times[i-1]; gap < interval {
						t.Fatalf("connection %d sent twice within %v", c, gap)
					}
				}
			}
			if want := min(tt.conns, len(all)); len(offsets) != want {
				t.Errorf("%d distinct first offsets over %d connections, want %d", len(offsets), tt.conns, want)
			}
		})
	}
}

func TestScheduleWarmup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         Options
		wantMeasure  time.Duration
		wantWarm     int // claims marked warm-up
		wantMeasured int
	}{
		{
			name:        "open loop: warm-up hits come first, then the request bound",
			opts:        Options{Rate: 100, Warmup: 100 * time.Millisecond, Requests: 5},
			wantMeasure: 100 * time.Millisecond, wantWarm: 10, wantMeasured: 5,
		},
		{
			name:        "open loop: duration counts after the warm-up",
			opts:        Options{Rate: 100, Warmup: 50 * time.Millisecond, Duration: 100 * time.Millisecond},
			wantMeasure: 50 * time.Millisecond, wantWarm: 5, wantMeasured: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(&tt.opts, 0)
			if s.measured() != tt.wantMeasure {
				t.Errorf("measured phase starts at %v, want %v", s.measured(), tt.wantMeasure)
			}
			warm, measured := 0, 0
			for {
				tk, ok := s.claim(0)
				if !ok {
					break
				}
				if tk.warmup {
					warm++
					if tk.intended >= s.measured() {
						t.Errorf("warm-up send due at %v, after the warm-up", tk.intended)
					}
				} else {
					measured++
				}
			}
			if warm != tt.wantWarm || measured != tt.wantMeasured {
				t.Errorf("%d warm-up and %d measured sends, want %d and %d", warm, measured, tt.wantWarm, tt.wantMeasured)
			}
		})
	}
}

func TestScheduleClosedLoop(t *testing.T) {
	t.Parallel()
	s := newSchedule(&Options{Requests: 3, Warmup: time.Second}, 0)
	if tk, ok := s.claim(time.Second / 2); !ok || !tk.warmup {
		t.Fatalf("claim during warm-up = %+v, %v; want a warm-up send", tk, ok)
	}
	for i := range 3 {
		if tk, ok := s.claim(time.Second + time.Duration(i)); !ok || tk.warmup {
			t.Fatalf("measured claim %d = %+v, %v", i, tk, ok)
		}
	}
	if _, ok := s.claim(2 * time.Second); ok {
		t.Fatal("a fourth measured send past --requests 3")
	}
}
