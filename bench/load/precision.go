package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// precisionBench runs meshbench's open loop against the healthy server: the
// latency from the intended send time must match the one from the actual
// send (the pacer sends on time), and the rate must be the one asked.
func precisionBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	const (
		rate  = 2000
		conns = 32
		run   = 10 * time.Second
	)
	fmt.Fprintf(w, "== Pacing: meshbench open loop %d/s, %d connections, %s, healthy server\n", rate, conns, run)
	p, err := runPinned(ctx, nil, nil, cfg.tools["meshbench"], "load", "-q", "--rate", fmt.Sprint(rate), "-c", fmt.Sprint(conns),
		"-d", secs(run), "--output", "json", srv.url)
	if err != nil {
		return err
	}
	var r meshbenchReport
	if err := json.Unmarshal(p.stdout, &r); err != nil {
		return err
	}
	diff := ms(r.LatencyMS.P50) - ms(r.UncorrectedMS.P50)
	fmt.Fprintf(w, "  requests %d, errors %d, achieved rate %.2f/s\n", r.Requests, r.Errors, r.AchievedRate)
	fmt.Fprintf(w, "  p50 from intended send %s, from actual send %s; send lag p50 %s p99 %s max %s, %d late (>1ms)\n",
		ms(r.LatencyMS.P50), ms(r.UncorrectedMS.P50), ms(r.SendLagMS.P50), ms(r.SendLagMS.P99), ms(r.SendLagMS.Max), r.LateSends)
	fmt.Fprintf(w, "  client CPU %.3fs = %.1f µs/request; distorted %v %q\n", r.ClientCPUS, 1e6*r.ClientCPUS/float64(max(r.Requests, 1)), r.Distorted, r.Warnings)
	verdict(w, diff.Abs() <= 20*time.Microsecond, "p50 within 20µs of the uncorrected p50 (%s apart)", diff)
	off := math.Abs(r.AchievedRate/rate - 1)
	verdict(w, off <= 0.001, "achieved rate within 0.1%% of %d/s (%.3f%% off)", rate, 100*off)
	return nil
}
