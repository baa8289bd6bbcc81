package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// memoryBench runs a long closed loop at full speed and samples meshbench's
// resident memory: it must stay flat, whatever the number of requests.
func memoryBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	n := int64(1_000_000)
	if cfg.long {
		n = 10_000_000
	}
	fmt.Fprintf(w, "== Memory: meshbench closed loop, 64 connections, %d requests at full speed\n", n)
	type sample struct {
		at  time.Duration
		rss int64
	}
	var (
		mu      sync.Mutex
		samples []sample
	)
	during := func(pid int) {
		start := time.Now()
		for {
			v, err := rss(pid)
			if err != nil {
				return // the process is gone
			}
			mu.Lock()
			samples = append(samples, sample{time.Since(start), v})
			mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}
	p, err := runPinned(ctx, nil, during, cfg.tools["meshbench"], "load", "-q", "-c", "64", "-n", fmt.Sprint(n), "--output", "json", srv.url)
	if err != nil {
		return err
	}
	var r meshbenchReport
	if err := json.Unmarshal(p.stdout, &r); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(samples) < 3 {
		return fmt.Errorf("only %d RSS samples", len(samples))
	}
	// "Start" is the first sample a second in, once connections and
	// histograms exist; "end" is the last one before exit.
	first := samples[0]
	for _, s := range samples {
		if s.at >= time.Second {
			first = s
			break
		}
	}
	last, peak := samples[len(samples)-1], int64(0)
	for _, s := range samples {
		peak = max(peak, s.rss)
	}
	fmt.Fprintf(w, "  %d requests (%d errors) in %.1fs, %.0f/s, %.2f µs CPU/request\n", r.Requests, r.Errors, r.DurationS,
		float64(r.Requests)/r.DurationS, 1e6*r.ClientCPUS/float64(max(r.Requests, 1)))
	fmt.Fprintf(w, "  RSS at %s: %.1f MiB; at %s (end): %.1f MiB; peak %.1f MiB\n",
		first.at.Round(100*time.Millisecond), mib(first.rss), last.at.Round(100*time.Millisecond), mib(last.rss), mib(peak))
	verdict(w, last.rss-first.rss < 4<<20, "memory flat: grew %.1f MiB from %s to the end", mib(last.rss-first.rss), first.at.Round(100*time.Millisecond))
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
