package load

import (
	"context"
	"fmt"
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
	drivers, err := newDrivers(&o, t, hists)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, d := range drivers {
			d.close()
		}
	}()
	if !o.NoKeepAlive {
		preconnect(ctx, drivers)
	}

	base := time.Now()
	sched := newSchedule(&o, 0)
	var cpuStart atomic.Int64
	cpuStart.Store(int64(processCPU()))
	// The warm-up's CPU is not the measured phase's.
	quit := make(chan struct{})
	settled := make(chan bool, 1)
	switch {
	case o.WarmupMax > 0:
		go func() {
			took, ok := sched.settle(base, o.Warmup, o.WarmupMax, quit)
			if took > 0 {
				cpuStart.Store(int64(processCPU()))
			}
			settled <- ok
		}()
	case sched.measured() > 0:
		t := time.AfterFunc(sched.measured(), func() { cpuStart.Store(int64(processCPU())) })
		defer t.Stop()
	}
	if live != nil {
		live.begin(&o, base, sched, drivers)
		defer live.finish()
	}
	// Workers poll stopped rather than ctx: a context's Done goes through
	// interfaces and locks, and they check it twice a request.
	var stopped atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		stopped.Store(true)
		for _, d := range drivers {
			d.abort()
		}
	})
	defer stop()

	var wg sync.WaitGroup
	for _, d := range drivers {
		wg.Go(func() { d.run(ctx, sched, base, &stopped) })
	}
	wg.Wait()
	cpuEnd := processCPU()
	close(quit)
	var unsettled bool
	if o.WarmupMax > 0 {
		unsettled = !<-settled
	}

	res := newResult(o)
	var end, lastSend, lastIntended time.Duration
	for _, d := range drivers {
		rec := d.stats()
		rec.addTo(res)
		end = max(end, rec.end)
		lastSend = max(lastSend, rec.lastSend)
		lastIntended = max(lastIntended, rec.lastIntended)
	}
	hists.addTo(res)
	measure := sched.measured()
	res.Start = base.Add(measure)
	res.End = base.Add(max(end, measure))
	res.ClientCPU = time.Duration(int64(cpuEnd) - cpuStart.Load())
	res.ClientCores, _ = cores()
	res.AchievedRate = achievedRate(res, sched, lastIntended, lastSend, end)
	res.assess()
	if o.WarmupMax > 0 {
		res.WarmedUp = measure
		if unsettled && ctx.Err() == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"the warm-up did not settle: the throughput still rose after %s (warmup_max)", o.WarmupMax))
		}
	}
	if err := ctx.Err(); err != nil {
		res.Warnings = append(res.Warnings, "interrupted: the measured phase did not finish")
		return res, err
	}
	return res, nil
}

// spareFor is the number of Ps the program had when SpareP gave it one
// more; 0 until then.
var spareFor atomic.Int32

// SpareP gives the runtime one P more than it has, once, when o's
// connections go to loops (plain-TCP HTTP/1.1). Run then keeps a loop per
// P the program had, counts those as its cores, and lets each loop keep
// its P while it waits (loop.go), the spare one being left to the rest of
// the program. A program whose work is Run calls it first; without it,
// loops hold their P only while a P is left over. Workers (TLS, HTTP/2,
// gRPC) are goroutines of the scheduler, which a P without a CPU would
// only make spin.
func SpareP(o Options) {
	if t, err := parseTarget(o.URL); err != nil || !looped(&o, t) {
		return
	}
	n := runtime.GOMAXPROCS(0)
	if spareFor.CompareAndSwap(0, int32(n)) {
		runtime.GOMAXPROCS(n + 1)
	}
}

// cores is the number of CPUs the run's loops may use, and the runtime's
// Ps (one more after SpareP).
func cores() (n, procs int) {
	procs = runtime.GOMAXPROCS(0)
	if n := int(spareFor.Load()); n > 0 && n < procs {
		return n, procs
	}
	return procs, procs
}

// looped says whether o's connections to t go to loops: plain-TCP
// HTTP/1.1.
func looped(o *Options, t target) bool { return !t.tls && !o.HTTP2 && !o.GRPC }

// newDrivers makes the run's drivers. Plain-TCP HTTP/1.1 connections go
// to loops, one per core, as wrk runs a thread per core; every other
// connection gets a worker.
func newDrivers(o *Options, t target, hists *sink) ([]driver, error) {
	var drivers []driver
	fail := func(err error) ([]driver, error) {
		for _, d := range drivers {
			d.close()
		}
		return nil, err
	}
	if looped(o, t) {
		req := http1Request(o, t)
		c, procs := cores()
		n := min(c, o.Connections)
		for i := range n {
			// Connection j goes to loop j mod n; a loop keeps its P while
			// it waits if a P is left over.
			l, err := newLoop(o, t, req, (o.Connections-i+n-1)/n, procs > n, newRecorder(hists))
			if err != nil {
				return fail(err)
			}
			drivers = append(drivers, l)
		}
		return drivers, nil
	}
	alpn := "h2"
	var req []byte
	if !o.HTTP2 && !o.GRPC {
		alpn, req = "http/1.1", http1Request(o, t)
	}
	d := newDialer(t, o, alpn)
	for range o.Connections {
		w := &worker{rec: newRecorder(hists), timeout: o.Timeout}
		// Its own dialer, so that it counts its own connections.
		d := &dialer{addr: d.addr, tls: d.tls, timeout: d.timeout, nd: d.nd, dials: &w.dials}
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
				return fail(err)
			}
			w.sleep = s
		}
		drivers = append(drivers, w)
	}
	return drivers, nil
}

// preconnect opens every connection before the clock starts, as a client
// with a warm pool would have them.
func preconnect(ctx context.Context, drivers []driver) {
	var wg sync.WaitGroup
	for _, d := range drivers {
		wg.Go(func() { d.connect(ctx) })
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
