package load

import (
	"sync/atomic"
	"time"
)

// schedule hands out sends to the connections. Each idle connection claims
// the next hit and waits for its due time, so that consecutive hits go to
// different connections, each with its own offset: sends are spread evenly,
// never in synchronized bursts, and a hit never waits behind a busy
// connection while another is idle. When every connection is busy, the
// first to free up takes the overdue hit at once, and its lag is recorded.
type schedule struct {
	pacer Pacer
	open  bool
	// Offsets from the run's base time: open-loop hit 0 is due at start;
	// the measured phase begins at measure.
	start   time.Duration
	measure time.Duration
	// warmupHits is the number of open-loop hits due in the warm-up.
	warmupHits int64
	hits       atomic.Int64
}

// ticket is one claimed send.
type ticket struct {
	intended time.Duration
	warmup   bool
}

func newSchedule(o *Options, start time.Duration) *schedule {
	s := &schedule{open: o.Rate > 0, start: start}
	if s.open {
		warm := Pacer{Rate: o.Rate}
		s.warmupHits = warm.Hits(o.Warmup)
		s.pacer = Pacer{Rate: o.Rate}
		if o.Duration > 0 {
			s.pacer.Duration = o.Warmup + o.Duration
		}
		if o.Requests > 0 {
			s.pacer.Max = s.warmupHits + o.Requests
		}
		s.measure = start + s.pacer.Due(s.warmupHits)
		return s
	}
	s.pacer = Pacer{Duration: o.Duration, Max: o.Requests}
	s.measure = start + o.Warmup
	return s
}

// claim takes the next send at time now, or reports that the run is over.
func (s *schedule) claim(now time.Duration) (ticket, bool) {
	if s.open {
		h := s.hits.Add(1) - 1
		if _, stop := s.pacer.Pace(now-s.start, h); stop {
			return ticket{}, false
		}
		return ticket{intended: s.start + s.pacer.Due(h), warmup: h < s.warmupHits}, true
	}
	if now < s.measure {
		return ticket{intended: now, warmup: true}, true
	}
	if _, stop := s.pacer.Pace(now-s.measure, s.hits.Add(1)-1); stop {
		return ticket{}, false
	}
	return ticket{intended: now}, true
}
