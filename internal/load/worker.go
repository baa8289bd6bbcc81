package load

import (
	"context"
	"sync/atomic"
	"time"
)

// roundTripper is one connection of a protocol: roundTrip sends the
// request and waits for the whole response, connecting first as needed; now
// is the send time. connect opens the connection ahead of the first
// request. abort may be called from another goroutine, to end a request in
// flight and keep the connection closed.
type roundTripper interface {
	roundTrip(ctx context.Context, now time.Time) (status int, err error)
	connect(ctx context.Context) error
	abort()
}

// driver runs some of a run's connections: a loop, many plain-TCP HTTP/1.1
// connections from one goroutine, or a worker, one connection of another
// protocol (TLS, HTTP/2, gRPC) from its own.
type driver interface {
	// connect opens the connections before the clock starts; one that
	// fails is retried, and its error recorded, by its first request.
	connect(ctx context.Context)
	// run drives them until the schedule ends, or stopped.
	run(ctx context.Context, s *schedule, base time.Time, stopped *atomic.Bool)
	// abort stops run from another goroutine.
	abort()
	// close releases what the driver holds, after run returned or when it
	// never ran.
	close()
	stats() *recorder
}

// worker drives one connection: claim a send, wait for its time, send,
// record.
type worker struct {
	rt      roundTripper
	sleep   *sleeper // open loop only
	rec     *recorder
	timeout time.Duration
	dials   atomic.Int64 // connections its dialer opened
}

func (w *worker) connect(ctx context.Context) {
	if err := w.rt.connect(ctx); err != nil && ctx.Err() == nil {
		w.rec.unopen(err)
	}
}

func (w *worker) stats() *recorder { return w.rec }

func (w *worker) close() { w.abort() }

func (w *worker) run(ctx context.Context, s *schedule, base time.Time, stopped *atomic.Bool) {
	timeout := w.timeout
	// Each request reads the clock twice, as it leaves and as its response
	// comes; the claim of the next one reuses the second reading.
	now := time.Since(base)
	for !stopped.Load() {
		t, ok := s.claim(now)
		if !ok {
			return
		}
		if w.sleep != nil {
			if err := w.sleep.until(base, t.intended); err != nil {
				return
			}
		}
		sent := time.Since(base)
		if !s.open {
			t.intended = sent
		}
		dials := w.dials.Load()
		status, err := w.rt.roundTrip(ctx, base.Add(sent))
		now = time.Since(base)
		if stopped.Load() {
			// Cancelled: this request was cut short by the abort.
			return
		}
		if err == nil && timeout > 0 && now-sent > timeout {
			err = errTimeout
		}
		if !t.warmup {
			w.rec.dials += w.dials.Load() - dials
			w.rec.record(t.intended, sent, now, status, err)
		}
	}
}

func (w *worker) abort() {
	w.rt.abort()
	if w.sleep != nil {
		_ = w.sleep.close()
	}
}
