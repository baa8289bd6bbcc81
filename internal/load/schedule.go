package load

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// schedule hands out sends to the connections. Each idle connection claims
// the next hit and waits for its due time, so that consecutive hits go to
// different connections, each with its own offset: sends are spread evenly,
// never in synchronized bursts, and a hit never waits behind a busy
// connection while another is idle. When every connection is busy, the
// first to free up takes the overdue hit at once, and its lag is recorded.
// Poisson arrivals are handed out in the same way, each hit's due time
// the last one's plus an exponential gap.
type schedule struct {
	pacer Pacer
	open  bool
	// poisson, in an open loop, spaces the hits by exponential gaps
	// (ArrivalsPoisson), drawn under mu in claim order, so that hit i's
	// due time is the same however the connections race for it.
	poisson bool
	mu      sync.Mutex
	gaps    poissonGaps   // under mu
	next    time.Duration // under mu: the next hit's due time, from start
	sent    int64         // under mu: measured hits handed out
	warmup  time.Duration // a Poisson schedule's hits due before it warm up
	// Offsets from the run's base time: open-loop hit 0 is due at start;
	// the measured phase begins at measure, which settle may set while
	// the run goes on (closed loop with WarmupMax).
	start   time.Duration
	measure atomic.Int64
	// warmupHits is the number of open-loop hits due in the warm-up.
	warmupHits int64
	hits       atomic.Int64
	// warmSends counts a closed loop's warm-up sends: each connection
	// sends when its last response came, so they count responses too.
	warmSends atomic.Int64
}

// ticket is one claimed send.
type ticket struct {
	intended time.Duration
	warmup   bool
}

func newSchedule(o *Options, start time.Duration) *schedule {
	s := &schedule{open: o.Rate > 0, start: start}
	if s.open && o.Arrivals == ArrivalsPoisson {
		// The measured phase is [Warmup, Warmup+Duration) exactly, its
		// hits those due in it: by the process's lack of memory, its
		// arrivals are a Poisson process of the rate from its start, as
		// the whole run's are from 0 (the first hit one gap after it).
		s.poisson, s.warmup = true, o.Warmup
		s.gaps = newPoissonGaps(o.Rate, o.Seed)
		s.next = s.gaps.next()
		s.pacer = Pacer{Rate: o.Rate, Max: o.Requests}
		if o.Duration > 0 {
			s.pacer.Duration = o.Warmup + o.Duration
		}
		s.measure.Store(int64(start + o.Warmup))
		return s
	}
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
		s.measure.Store(int64(start + s.pacer.Due(s.warmupHits)))
		return s
	}
	s.pacer = Pacer{Duration: o.Duration, Max: o.Requests}
	s.measure.Store(int64(start + max(o.Warmup, o.WarmupMax)))
	return s
}

// measured is when the measured phase begins, as an offset from the run's
// base time.
func (s *schedule) measured() time.Duration { return time.Duration(s.measure.Load()) }

// claim takes the next send at time now, or reports that the run is over.
func (s *schedule) claim(now time.Duration) (ticket, bool) {
	if s.poisson {
		return s.claimPoisson()
	}
	if s.open {
		h := s.hits.Add(1) - 1
		if _, stop := s.pacer.Pace(now-s.start, h); stop {
			return ticket{}, false
		}
		return ticket{intended: s.start + s.pacer.Due(h), warmup: h < s.warmupHits}, true
	}
	measure := s.measured()
	if now < measure {
		s.warmSends.Add(1)
		return ticket{intended: now, warmup: true}, true
	}
	if _, stop := s.pacer.Pace(now-measure, s.hits.Add(1)-1); stop {
		return ticket{}, false
	}
	return ticket{intended: now}, true
}

// claimPoisson takes the next hit of a Poisson schedule: due at the last
// one's due time plus a gap, in the warm-up when due before it. The run is
// over at the first hit due at or after the duration's end, or past the
// measured requests; the hits due before are handed out however late.
func (s *schedule) claimPoisson() (ticket, bool) {
	s.mu.Lock()
	due := s.next
	warm := due < s.warmup
	if s.pacer.Duration > 0 && due >= s.pacer.Duration || !warm && s.pacer.Max > 0 && s.sent >= s.pacer.Max {
		s.mu.Unlock()
		return ticket{}, false
	}
	if !warm {
		s.sent++
	}
	s.next = due + s.gaps.next()
	s.mu.Unlock()
	return ticket{intended: s.start + due, warmup: warm}, true
}

// settleWindows is how many windows a settling warm-up's minimum is cut
// into, and settleCount the fewest sends a span of windows is judged on:
// a slow server's throughput is compared over as many windows as it takes
// to send that many.
const (
	settleWindows = 2
	settleCount   = 20
)

// settle ends a closed loop's warm-up once its throughput stops rising,
// for a cold proxy can take far longer than a fixed warm-up to serve at
// its rate (on an emulated CPU, tens of seconds): not before warmup, and
// at most at the latest. From warmup on, at the end of each window (a
// half of warmup), the sends of the last k windows are compared with
// those of the k before, k the fewest windows that sent settleCount: the
// warm-up ends when the later span sent no more than 10% more. That errs
// towards warming up longer: noise that makes a steady throughput seem to
// rise costs a window, while a rise taken for steady would be measured.
// A rise slower than 10% a window is taken for steady: what this ends is
// a cold start, in which a proxy serves a fraction of its rate.
// It returns, at the measured phase's start, the warm-up's length and
// whether it settled before most; 0 when quit was closed first.
func (s *schedule) settle(base time.Time, warmup, most time.Duration, quit <-chan struct{}) (time.Duration, bool) {
	window := warmup / settleWindows
	var sends []int64 // per window
	for at := window; ; at = min(at+window, most) {
		t := time.NewTimer(time.Until(base.Add(at)))
		select {
		case <-quit:
			t.Stop()
			return 0, false
		case <-t.C:
		}
		if at >= most {
			// The measured phase begins now, as newSchedule set it.
			return most, false
		}
		sends = append(sends, s.warmSends.Swap(0))
		if at >= warmup && risen(sends) <= 1.1 {
			s.measure.Store(int64(at))
			return at, true
		}
	}
}

// risen is the ratio of the sends of the last k windows to those of the k
// before, k the fewest windows with settleCount sends; +Inf when too few
// windows have passed for two such spans, or the earlier sent nothing.
func risen(sends []int64) float64 {
	var last int64
	for k := 1; 2*k <= len(sends); k++ {
		last += sends[len(sends)-k]
		if last < settleCount {
			continue
		}
		var before int64
		for _, n := range sends[len(sends)-2*k : len(sends)-k] {
			before += n
		}
		if before == 0 {
			break
		}
		return float64(last) / float64(before)
	}
	return math.Inf(1)
}
