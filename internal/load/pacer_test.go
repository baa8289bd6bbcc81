package load

import (
	"testing"
	"time"
)

func TestPacerPace(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name     string
		pacer    Pacer
		elapsed  time.Duration
		hits     int64
		wantWait time.Duration
		wantStop bool
	}{
		{name: "first hit is due at once", pacer: Pacer{Rate: 1000}, elapsed: 0, hits: 0, wantWait: 0},
		{name: "second hit one interval later", pacer: Pacer{Rate: 1000}, elapsed: 0, hits: 1, wantWait: ms},
		{name: "waits the remainder", pacer: Pacer{Rate: 1000}, elapsed: 300 * time.Microsecond, hits: 1, wantWait: 700 * time.Microsecond},
		{name: "late hit is due now", pacer: Pacer{Rate: 1000}, elapsed: 5 * ms, hits: 2, wantWait: 0},
		{name: "fractional rate", pacer: Pacer{Rate: 3}, elapsed: 0, hits: 1, wantWait: 333333333},
		{name: "no drift after a million hits", pacer: Pacer{Rate: 2000}, elapsed: 0, hits: 1_000_000, wantWait: 500 * time.Second},
		{name: "duration bound excludes the hit due at the end", pacer: Pacer{Rate: 10, Duration: time.Second}, elapsed: 0, hits: 10, wantStop: true},
		{name: "last hit inside the duration", pacer: Pacer{Rate: 10, Duration: time.Second}, elapsed: 0, hits: 9, wantWait: 900 * ms},
		{name: "request bound", pacer: Pacer{Rate: 10, Max: 5}, elapsed: 0, hits: 5, wantStop: true},
		{name: "below request bound", pacer: Pacer{Rate: 10, Max: 5}, elapsed: 0, hits: 4, wantWait: 400 * ms},
		{name: "closed loop never waits", pacer: Pacer{Duration: time.Second}, elapsed: 999 * ms, hits: 123456, wantWait: 0},
		{name: "closed loop stops at duration", pacer: Pacer{Duration: time.Second}, elapsed: time.Second, hits: 1, wantStop: true},
		{name: "closed loop stops at max", pacer: Pacer{Max: 3}, elapsed: 0, hits: 3, wantStop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := tt.pacer.Pace(tt.elapsed, tt.hits)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.hits, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestPacerHits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pacer   Pacer
		elapsed time.Duration
		want    int64
	}{
		{name: "nothing before the start", pacer: Pacer{Rate: 100}, elapsed: 0, want: 0},
		{name: "hit 0 is due at 0", pacer: Pacer{Rate: 100}, elapsed: 1, want: 1},
		{name: "exact boundary excludes the hit due then", pacer: Pacer{Rate: 100}, elapsed: time.Second, want: 100},
		{name: "just past the boundary", pacer: Pacer{Rate: 100}, elapsed: time.Second + 1, want: 101},
		{name: "awkward rate", pacer: Pacer{Rate: 3}, elapsed: time.Second, want: 3},
		{name: "closed loop has no hits", pacer: Pacer{}, elapsed: time.Second, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.pacer.Hits(tt.elapsed)
			if got != tt.want {
				t.Fatalf("Hits(%v) = %d, want %d", tt.elapsed, got, tt.want)
			}
			// Hits must agree with Due: the first hit not before elapsed.
			if got > 0 && tt.pacer.Due(got-1) >= tt.elapsed {
				t.Errorf("Due(%d) = %v is not before %v", got-1, tt.pacer.Due(got-1), tt.elapsed)
			}
		})
	}
}
