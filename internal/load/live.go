package load

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Live shows a running load's progress: Snapshot for a progress line, and
// ServeHTTP for Prometheus. One Live may watch several runs in turn. Its
// zero value is ready to use; it is safe for concurrent use.
type Live struct {
	mu  sync.Mutex
	run *liveRun
}

type liveRun struct {
	opts     Options
	base     time.Time
	sched    *schedule
	counters []*counters
	done     bool
}

// Progress is a snapshot of a run. Counts cover the measured phase only.
type Progress struct {
	Phase     string           `json:"phase"` // idle, warmup, measure or done
	Elapsed   time.Duration    `json:"elapsed"`
	Duration  time.Duration    `json:"duration,omitempty"` // the bound, if any
	Requests  int64            `json:"requests"`
	Target    int64            `json:"target,omitempty"` // the request bound, if any
	Errors    int64            `json:"errors"`
	LateSends int64            `json:"late_sends"`
	ByClass   map[string]int64 `json:"by_class"`
	Rate      float64          `json:"rate,omitempty"` // the target rate, if open loop
}

func (l *Live) begin(o *Options, base time.Time, sched *schedule, drivers []driver) {
	r := &liveRun{opts: *o, base: base, sched: sched}
	for _, d := range drivers {
		r.counters = append(r.counters, &d.stats().live)
	}
	l.mu.Lock()
	l.run = r
	l.mu.Unlock()
}

func (l *Live) finish() {
	l.mu.Lock()
	if l.run != nil {
		l.run.done = true
	}
	l.mu.Unlock()
}

// Snapshot returns the progress of the current or last run.
func (l *Live) Snapshot() Progress {
	l.mu.Lock()
	r := l.run
	done := r != nil && r.done
	l.mu.Unlock()
	p := Progress{Phase: "idle", ByClass: map[string]int64{}}
	if r == nil {
		return p
	}
	p.Duration, p.Target, p.Rate = r.opts.Duration, r.opts.Requests, r.opts.Rate
	elapsed := time.Since(r.base) - r.sched.measured()
	switch {
	case done:
		p.Phase = "done"
	case elapsed < 0:
		p.Phase = "warmup"
	default:
		p.Phase = "measure"
	}
	p.Elapsed = max(elapsed, 0)
	for _, c := range r.counters {
		p.LateSends += c.late.Load()
		for i, name := range classNames {
			if n := c.byClass[i].Load(); n > 0 {
				p.ByClass[name] += n
				p.Requests += n
			}
		}
	}
	p.Errors = p.ByClass["error"]
	return p
}

// WritePrometheus writes the snapshot in Prometheus' text format.
func (l *Live) WritePrometheus(w io.Writer) error {
	p := l.Snapshot()
	var b []byte
	metric := func(name, typ, help string) {
		b = fmt.Appendf(b, "# HELP meshbench_load_%s %s\n# TYPE meshbench_load_%s %s\n", name, help, name, typ)
	}
	metric("requests_total", "counter", "Requests completed in the measured phase, by status class (error: no response).")
	for _, name := range classNames {
		b = fmt.Appendf(b, "meshbench_load_requests_total{class=%q} %d\n", name, p.ByClass[name])
	}
	metric("late_sends_total", "counter", "Open-loop sends that left more than 1 ms after their intended time.")
	b = fmt.Appendf(b, "meshbench_load_late_sends_total %d\n", p.LateSends)
	metric("elapsed_seconds", "gauge", "Time since the measured phase began.")
	b = fmt.Appendf(b, "meshbench_load_elapsed_seconds %g\n", p.Elapsed.Seconds())
	metric("duration_seconds", "gauge", "Length of the measured phase asked for; 0 when bounded by requests.")
	b = fmt.Appendf(b, "meshbench_load_duration_seconds %g\n", p.Duration.Seconds())
	metric("target_requests", "gauge", "Requests asked for; 0 when bounded by time.")
	b = fmt.Appendf(b, "meshbench_load_target_requests %d\n", p.Target)
	metric("target_rate", "gauge", "Open-loop arrival rate asked for, per second; 0 in closed loop.")
	b = fmt.Appendf(b, "meshbench_load_target_rate %g\n", p.Rate)
	metric("phase", "gauge", "1 for the current phase of the run.")
	for _, ph := range []string{"idle", "warmup", "measure", "done"} {
		v := 0
		if ph == p.Phase {
			v = 1
		}
		b = fmt.Appendf(b, "meshbench_load_phase{phase=%q} %d\n", ph, v)
	}
	metric("client_cpu_seconds_total", "counter", "CPU time the generator process has used.")
	b = fmt.Appendf(b, "meshbench_load_client_cpu_seconds_total %g\n", processCPU().Seconds())
	_, err := w.Write(b)
	return err
}

// ServeHTTP serves WritePrometheus, for --serve-metrics.
func (l *Live) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = l.WritePrometheus(w)
}
