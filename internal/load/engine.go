package load

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// Run generates the load o describes and returns the measured phase. live,
// when not nil, shows progress while Run works. When ctx is cancelled, Run
// stops at once and returns what it measured so far, with ctx's error.
func Run(ctx context.Context, o Options, live *Live) (*Result, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	t, err := parseTarget(o.URL)
	if err != nil {
		return nil, err
	}
	hists := newSink(o.Rate > 0)
	workers, err := newWorkers(&o, t, hists)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range workers {
			w.abort()
		}
	}()
	if !o.NoKeepAlive {
		preconnect(ctx, workers)
	}

	base := time.Now()
	sched := newSchedule(&o, 0)
	var cpuStart atomic.Int64
	cpuStart.Store(int64(processCPU()))
	if sched.measure > 0 {
		// The warm-up's CPU is not the measured phase's.
		t := time.AfterFunc(sched.measure, func() { cpuStart.Store(int64(processCPU())) })
		defer t.Stop()
	}
	if live != nil {
		live.begin(&o, base, sched.measure, workers)
		defer live.finish()
	}
	// Workers poll stopped rather than ctx: a context's Done goes through
	// interfaces and locks, and they check it twice a request.
	var stopped atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		stopped.Store(true)
		for _, w := range workers {
			w.abort()
		}
	})
	defer stop()

	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.run(ctx, sched, base, o.Timeout, &stopped) })
	}
	wg.Wait()
	cpuEnd := processCPU()

	res := newResult(o)
	var end, lastSend time.Duration
	for _, w := range workers {
		w.rec.addTo(res)
		end = max(end, w.rec.end)
		lastSend = max(lastSend, w.rec.lastSend)
	}
	hists.addTo(res)
	res.Start = base.Add(sched.measure)
	res.End = base.Add(max(end, sched.measure))
	res.ClientCPU = time.Duration(int64(cpuEnd) - cpuStart.Load())
	res.ClientCores = runtime.GOMAXPROCS(0)
	res.AchievedRate = achievedRate(res, sched, lastSend, end)
	res.assess()
	if err := ctx.Err(); err != nil {
		res.Warnings = append(res.Warnings, "interrupted: the measured phase did not finish")
		return res, err
	}
	return res, nil
}

func newWorkers(o *Options, t target, hists *sink) ([]*worker, error) {
	var req []byte
	alpn := "http/1.1"
	if o.HTTP2 || o.GRPC {
		alpn = "h2"
	} else {
		req = http1Request(o, t)
	}
	d := newDialer(t, o, alpn)
	workers := make([]*worker, o.Connections)
	for i := range workers {
		w := &worker{rec: newRecorder(hists)}
		switch {
		case o.GRPC:
			w.rt = newGRPCConn(d, t, o)
		case o.HTTP2:
			w.rt = newHTTP2Conn(d, t, o)
		default:
			w.rt = newHTTP1Conn(d, req, o)
		}
		if o.Rate > 0 {
			s, err := newSleeper(time.Duration(float64(time.Second) / o.Rate))
			if err != nil {
				for _, w := range workers[:i] {
					w.abort()
				}
				return nil, err
			}
			w.sleep = s
		}
		workers[i] = w
	}
	return workers, nil
}

// preconnect opens every connection before the clock starts, as a client
// with a warm pool would have them; a connection that fails here is
// retried, and its error recorded, by its first request.
func preconnect(ctx context.Context, workers []*worker) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { _ = w.rt.connect(ctx) })
	}
	wg.Wait()
}

func newResult(o Options) *Result {
	return &Result{
		Options:     o,
		StatusCodes: map[int]int64{},
		ErrorKinds:  map[string]int64{},
		Latency:     metrics.NewHistogram(),
		ByClass:     map[string]*metrics.Histogram{},
		SendLag:     metrics.NewHistogram(),
	}
}
