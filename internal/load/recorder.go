package load

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// lateThreshold is how far behind its schedule a send must leave to count
// as late.
const lateThreshold = time.Millisecond

// classNames are the keys of Result.ByClass, indexed by status/100, with
// errors at index 0.
var classNames = [...]string{"error", "1xx", "2xx", "3xx", "4xx", "5xx"}

// failedClass says whether requests of class i (an index of classNames)
// failed: no response, or a 5xx one.
func failedClass(i int) bool { return i == 0 || i == 5 }

// batchSize is how many samples a connection keeps before it hands them to
// the shared histograms.
const batchSize = 64

// counters are one connection's live counts, read by Live while the run
// goes on. Each connection has its own, so that they are never contended;
// the request total is the sum of the classes.
type counters struct {
	byClass [len(classNames)]atomic.Int64
	late    atomic.Int64
}

// sink holds the run's histograms, shared by every connection. An HDR
// histogram spans tens of kilobytes, so one per connection would spread
// each recording over megabytes of cache; connections batch their samples
// instead and take the lock once per batch.
type sink struct {
	mu          sync.Mutex
	byClass     [len(classNames)]*metrics.Histogram // allocated when first used
	uncorrected *metrics.Histogram                  // open loop: from the actual send
	sendLag     *metrics.Histogram                  // open loop
}

func newSink(open bool) *sink {
	s := &sink{}
	if open {
		s.uncorrected = metrics.NewHistogram()
		s.sendLag = metrics.NewHistogram()
	}
	return s
}

// sample is one request's measurements, waiting in a connection's batch.
type sample struct {
	latency, uncorrected, lag time.Duration
	class                     int
}

func (s *sink) add(batch []sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range batch {
		b := &batch[i]
		h := s.byClass[b.class]
		if h == nil {
			h = metrics.NewHistogram()
			s.byClass[b.class] = h
		}
		h.Record(b.latency)
		if s.sendLag != nil {
			s.uncorrected.Record(b.uncorrected)
			s.sendLag.Record(b.lag)
		}
	}
}

// addTo moves the histograms into res. Latency takes only the classes
// that succeeded: a request that failed fast would otherwise pull the
// percentiles down, so that a failing system looked faster.
func (s *sink) addTo(res *Result) {
	for i, h := range s.byClass {
		if h != nil {
			if !failedClass(i) {
				res.Latency.Merge(h)
			}
			res.ByClass[classNames[i]] = h
		}
	}
	if s.sendLag != nil {
		res.Uncorrected = s.uncorrected
		res.SendLag = s.sendLag
	}
}

// recorder holds one connection's counts and its batch of samples. Only
// its goroutine writes it, except live, which Live reads. The fields every
// request touches come first, so that they share a cache line or two.
type recorder struct {
	n        int
	requests int64
	lastSend time.Duration // offsets from the run's base time
	// lastIntended is the latest intended send time recorded.
	lastIntended time.Duration
	end          time.Duration
	live         counters
	open         bool
	sink         *sink
	errors       int64
	late         int64
	dials        int64 // connections the measured phase's requests opened
	errKinds     map[string]int64
	unopened     map[string]int64 // connections not opened before the clock, by kind
	batch        [batchSize]sample
	status       [600]int64
}

func newRecorder(s *sink) *recorder {
	return &recorder{sink: s, open: s.sendLag != nil, errKinds: map[string]int64{}}
}

// record adds one completed request: intended is when its schedule said to
// send it, sent when it left, done when its response (or error) came.
func (r *recorder) record(intended, sent, done time.Duration, status int, err error) {
	class := 0
	if err == nil && (status < 100 || status > 599) {
		err = protocolError("status %d out of range", status)
	}
	if err != nil {
		r.errors++
		r.errKinds[errorKind(err)]++
	} else {
		class = status / 100
		r.status[status]++
	}
	lag := sent - intended
	r.batch[r.n] = sample{latency: done - intended, uncorrected: done - sent, lag: lag, class: class}
	if r.n++; r.n == batchSize {
		r.flush()
	}
	if r.open && lag > lateThreshold {
		r.late++
		r.live.late.Add(1)
	}
	r.requests++
	r.lastSend = max(r.lastSend, sent)
	r.lastIntended = max(r.lastIntended, intended)
	r.end = max(r.end, done)
	r.live.byClass[class].Add(1)
}

func (r *recorder) flush() {
	r.sink.add(r.batch[:r.n])
	r.n = 0
}

// addTo flushes the batch and adds the counts into res.
func (r *recorder) addTo(res *Result) {
	r.flush()
	res.Requests += r.requests
	res.Errors += r.errors
	res.LateSends += r.late
	res.NewConnections += r.dials
	for code, n := range r.status {
		if n > 0 {
			res.StatusCodes[code] += n
		}
	}
	for k, n := range r.errKinds {
		res.ErrorKinds[k] += n
	}
	for k, n := range r.unopened {
		if res.Unopened == nil {
			res.Unopened = map[string]int64{}
		}
		res.Unopened[k] += n
	}
}

// unopen counts a connection that could not be opened before the clock.
func (r *recorder) unopen(err error) {
	if r.unopened == nil {
		r.unopened = map[string]int64{}
	}
	r.unopened[errorKind(err)]++
}
