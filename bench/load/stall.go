package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
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

// stallTries is how many times meshbench's stall run is tried when the
// hypervisor took more than platform.ContentionLimit of the server's or
// the generator's CPU during it. The p99 is set by how fast the backlog
// drains after the stall, and a server CPU the hypervisor keeps taking
// drains it slowly: on this host such runs read several percent over the
// truth while the quiet runs beside them read within one. A busy run is
// no evidence either way.
const stallTries = 3

// stallTruth is the p99 an exact generator reports: requests due during a
// stall of length s wait for its end, so their latencies spread evenly over
// [0, s] and make up s/d of the run; the top 1% of all requests is the top
// (0.01·d/s) of those, whose latency is at least s - 0.01·d.
func stallTruth(s, d time.Duration) time.Duration {
	return s - time.Duration(0.01*float64(d))
}

// stallResult is one tool's stall run.
type stallResult struct {
	p99, truth time.Duration
	// steal is the share of the server's and of the generator's CPU the
	// hypervisor took during the run.
	steal [2]float64
}

func (r stallResult) quiet() bool { return max(r.steal[0], r.steal[1]) <= platform.ContentionLimit }

func stallBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	fmt.Fprintf(w, "== Stall: open loop %d/s, %d connections, %s; nginx stopped (SIGSTOP) for %s at %s\n",
		stallRate, stallConns, stallRun, stallFor, stallAt)
	fmt.Fprintf(w, "   steal: the share of the server's / the generator's CPU the hypervisor took during the run\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tp99\ttruth\terror\tsteal\tnote\t")
	var mine []stallResult
	for _, t := range tools {
		bin := cfg.tools[t.name]
		if t.open == nil {
			continue
		}
		if bin == "" {
			fmt.Fprintf(tw, "%s\t\t\t\t\tnot installed\t\n", t.name)
			continue
		}
		note := "uncorrected"
		if t.name == "meshbench" {
			note = "from intended send time"
		}
		for try := 1; ; try++ {
			r, err := stallOnce(ctx, srv, t, bin)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fmt.Fprintf(tw, "%s\t\t\t\t\t%s\t\n", t.name, err)
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f%%\t%.0f%% / %.0f%%\t%s\t\n", t.name, r.p99.Round(time.Microsecond), r.truth.Round(time.Microsecond),
				100*(float64(r.p99)/float64(r.truth)-1), 100*r.steal[0], 100*r.steal[1], note)
			if t.name != "meshbench" {
				break
			}
			mine = append(mine, r)
			if r.quiet() || try == stallTries {
				break
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(mine) == 0 {
		return nil
	}
	r := mine[len(mine)-1]
	rel := math.Abs(float64(r.p99)/float64(r.truth) - 1)
	if !r.quiet() {
		fmt.Fprintf(w, "  [BUSY] no verdict: the hypervisor took more than %.0f%% of a CPU in each of %d runs; try again later\n",
			100*platform.ContentionLimit, len(mine))
		return nil
	}
	verdict(w, rel <= 0.02, "meshbench p99 %s within 2%% of the truth %s (%.2f%% off), in a run with at most %.0f%% steal",
		r.p99.Round(time.Microsecond), r.truth.Round(time.Microsecond), 100*rel, 100*platform.ContentionLimit)
	return nil
}

// stallOnce runs tool t open-loop with nginx stopped partway, and reads its
// p99 and the hypervisor's steal on the two CPUs meanwhile.
func stallOnce(ctx context.Context, srv *nginx, t tool, bin string) (stallResult, error) {
	cpus := [2]int{serverCPU, generatorCPU}
	steal := func() (v [2]time.Duration, err error) {
		for i, c := range cpus {
			if v[i], err = cluster.Steal([]int{c}); err != nil {
				break
			}
		}
		return v, err
	}
	before, err := steal()
	if err != nil {
		return stallResult{}, err
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
		return stallResult{}, fmt.Errorf("failed: %s", firstLine(err))
	}
	after, err := steal()
	if err != nil {
		return stallResult{}, err
	}
	r := stallResult{truth: stallTruth(s, stallRun)}
	for i := range cpus {
		r.steal[i] = (after[i] - before[i]).Seconds() / p.wall.Seconds()
	}
	if r.p99, err = t.p99(p); err != nil {
		return stallResult{}, fmt.Errorf("unreadable output: %v", err)
	}
	return r, nil
}
