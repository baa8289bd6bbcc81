package study

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform"
)

// meter is a platform that reads the given contention, one value a call,
// the last one ever after.
type meter struct {
	platform.Platform
	reads []float64
	calls int
	err   error
}

func (m *meter) Contention(context.Context) (float64, error) {
	v := m.reads[min(m.calls, len(m.reads)-1)]
	m.calls++
	return v, m.err
}

func quietRunner(m *meter, wait, budget time.Duration) (*runner, *strings.Builder) {
	var out strings.Builder
	return &runner{p: m, progress: &out, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		quiet: quietPolicy{poll: time.Millisecond, wait: wait, budget: budget}}, &out
}

func TestWaitQuiet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Contended twice, then quiet: two waits, then on.
	m := &meter{reads: []float64{0.4, 0.3, 0.01}}
	r, out := quietRunner(m, time.Minute, time.Hour)
	if err := r.waitQuiet(ctx); err != nil {
		t.Fatal(err)
	}
	if m.calls != 3 || strings.Count(out.String(), "waiting for the host to quiet") != 2 {
		t.Errorf("%d checks, progress %q: want 3 checks and 2 waits", m.calls, out.String())
	}

	// Contended for good: the wait ends at its longest, and says so.
	m = &meter{reads: []float64{0.5}}
	r, out = quietRunner(m, 20*time.Millisecond, time.Hour)
	start := time.Now()
	if err := r.waitQuiet(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 20*time.Millisecond || took > 10*time.Second {
		t.Errorf("waited %v, want about 20ms", took)
	}
	if !strings.Contains(out.String(), "measuring anyway") {
		t.Errorf("progress %q: want the wait's end said", out.String())
	}

	// Once the run's budget is spent, no more checks.
	r.quiet.budget = r.quiet.waited
	calls := m.calls
	if err := r.waitQuiet(ctx); err != nil || m.calls != calls {
		t.Errorf("after the budget: %v, %d more checks; want none", err, m.calls-calls)
	}

	// A run on a shared host as it is: no check.
	m = &meter{reads: []float64{0.9}}
	r, _ = quietRunner(m, time.Minute, time.Hour)
	r.o.SharedHost = true
	if err := r.waitQuiet(ctx); err != nil || m.calls != 0 {
		t.Errorf("shared host: %v after %d checks, want nil after none", err, m.calls)
	}

	// A platform that cannot tell, or fails to: no wait.
	r, _ = quietRunner(nil, time.Minute, time.Hour)
	r.p = newFake()
	if err := r.waitQuiet(ctx); err != nil {
		t.Errorf("a platform without a meter: %v", err)
	}
	m = &meter{reads: []float64{0.9}, err: errors.New("no /proc")}
	r, _ = quietRunner(m, time.Minute, time.Hour)
	if err := r.waitQuiet(ctx); err != nil || m.calls != 1 {
		t.Errorf("a failing meter: %v after %d checks, want nil after 1", err, m.calls)
	}

	// Cancelled while waiting: ctx's error.
	cctx, cancel := context.WithCancel(ctx)
	m = &meter{reads: []float64{0.5}}
	r, _ = quietRunner(m, time.Hour, time.Hour)
	r.quiet.poll = time.Hour
	time.AfterFunc(10*time.Millisecond, cancel)
	if err := r.waitQuiet(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
