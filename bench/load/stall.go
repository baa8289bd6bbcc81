package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"syscall"
	"text/tabwriter"
	"time"
)

// The stall test: an open loop at stallRate over stallConns connections
// for stallRun; the nginx worker is stopped for stallFor, stallAt in.
const (
	stallRate  = 2000
	stallConns = 32
	stallRun   = 10 * time.Second
	stallAt    = 4 * time.Second
	stallFor   = time.Second
)

// stallTruth is the p99 an exact generator reports: requests due during a
// stall of length s wait for its end, so their latencies spread evenly over
// [0, s] and make up s/d of the run; the top 1% of all requests is the top
// (0.01·d/s) of those, whose latency is at least s - 0.01·d.
func stallTruth(s, d time.Duration) time.Duration {
	return s - time.Duration(0.01*float64(d))
}

func stallBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	fmt.Fprintf(w, "== Stall: open loop %d/s, %d connections, %s; nginx stopped (SIGSTOP) for %s at %s\n",
		stallRate, stallConns, stallRun, stallFor, stallAt)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tp99\ttruth\terror\tnote\t")
	var mine, mineTruth time.Duration
	for _, t := range tools {
		bin := cfg.tools[t.name]
		if t.open == nil {
			continue
		}
		if bin == "" {
			fmt.Fprintf(tw, "%s\t\t\t\tnot installed\t\n", t.name)
			continue
		}
		stalled := make(chan time.Duration, 1)
		during := func(int) {
			select {
			case <-time.After(stallAt):
			case <-ctx.Done():
				stalled <- 0
				return
			}
			start := time.Now()
			_ = srv.signal(syscall.SIGSTOP)
			time.Sleep(stallFor)
			_ = srv.signal(syscall.SIGCONT)
			stalled <- time.Since(start)
		}
		p, err := runPinned(ctx, nil, during, bin, t.open(srv.url, stallRate, stallConns, stallRun)...)
		s := <-stalled
		_ = srv.signal(syscall.SIGCONT)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(tw, "%s\t\t\t\tfailed: %s\t\n", t.name, firstLine(err))
			continue
		}
		p99, err := t.p99(p)
		if err != nil {
			fmt.Fprintf(tw, "%s\t\t\t\tunreadable output: %v\t\n", t.name, err)
			continue
		}
		truth := stallTruth(s, stallRun)
		note := "uncorrected"
		if t.name == "meshbench" {
			mine, mineTruth = p99, truth
			note = "from intended send time"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f%%\t%s\t\n", t.name, p99.Round(time.Microsecond), truth.Round(time.Microsecond),
			100*(float64(p99)/float64(truth)-1), note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if mineTruth > 0 {
		rel := math.Abs(float64(mine)/float64(mineTruth) - 1)
		verdict(w, rel <= 0.02, "meshbench p99 %s within 2%% of the truth %s (%.2f%% off)", mine.Round(time.Microsecond), mineTruth.Round(time.Microsecond), 100*rel)
	}
	return nil
}
