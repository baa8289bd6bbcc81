package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// cpuBench runs every tool in a closed loop, keep-alive, at each connection
// count, and prints its client CPU per completed request.
func cpuBench(ctx context.Context, cfg config, srv *nginx, w io.Writer) error {
	fmt.Fprintf(w, "== Client CPU per request: closed loop, HTTP/1.1 keep-alive, %s per run, CPU from wait4 rusage; each tool's median of %d rounds, each ratio the median of the rounds' ratios\n",
		cfg.duration, cfg.repeat)
	fmt.Fprintln(w, "   meshbench: as users run it, its progress line once a second; meshbench -q: without it")
	tmp, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, conns := range cfg.conns {
		// Rounds alternate the tools' order, each tool's figure is its
		// median round, and each comparison the median of the rounds'
		// ratios, so that a busy moment of a shared machine does not
		// decide it.
		runs := map[string][]cpuRow{}
		for round := range cfg.repeat {
			order := slices.Clone(tools)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, t := range order {
				r := measureCPU(ctx, t, t.bin(cfg), srv.url, conns, cfg.duration, tmp)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				runs[t.name] = append(runs[t.name], r)
			}
		}
		var rows []cpuRow
		for _, t := range tools {
			rows = append(rows, median(runs[t.name]))
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "tool\tconns\trequests\tfailed\treq/s\tcpu s\tcpu µs/req\trange\tvs wrk\t")
		for _, r := range rows {
			if r.note != "" {
				fmt.Fprintf(tw, "%s\t%d\t%s\t\t\t\t\t\t\t\n", r.name, conns, r.note)
				continue
			}
			vs := "-"
			if q, ok := pairedRatio(runs[r.name], runs["wrk"]); ok {
				vs = q.String()
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%.2f\t%.2f\t%s\t%s\t\n", r.name, conns, r.done, r.failed,
				float64(r.done)/cfg.duration.Seconds(), r.cpuSeconds, r.usPerReq, r.spread, vs)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, name := range []string{"meshbench", "meshbench -q"} {
			if m := median(runs[name]); m.engineUsPerReq > 0 {
				fmt.Fprintf(w, "  %s: its own account of its measured phase (no process start-up or exit): %.2f µs/req\n", name, m.engineUsPerReq)
			}
		}
		mine := runs["meshbench"]
		// The progress line must cost nothing a request: the default mode
		// within 5% of -q.
		if q, ok := pairedRatio(mine, runs["meshbench -q"]); ok {
			verdict(w, q.median >= 0.95 && q.median <= 1.05, "%d conns: meshbench's CPU per request with its progress line within 5%% of -q's: %s", conns, q)
		} else {
			verdict(w, false, "%d conns: no ratio of meshbench to meshbench -q", conns)
		}
		if q, ok := pairedRatio(runs["meshbench -q"], runs["wrk"]); ok {
			verdict(w, q.median <= 0.9, "%d conns: meshbench -q's CPU per request at most 0.9x wrk's: %s", conns, q)
		}
		if q, ok := pairedRatio(mine, runs["wrk"]); ok {
			verdict(w, q.median <= 0.9, "%d conns: meshbench's CPU per request at most 0.9x wrk's: %s", conns, q)
			for _, f := range []struct{ name, what string }{{"floor", "an epoll loop"}, {"floor-uring", "an io_uring loop"}} {
				fw, ok1 := pairedRatio(runs[f.name], runs["wrk"])
				mf, ok2 := pairedRatio(mine, runs[f.name])
				if ok1 && ok2 {
					fmt.Fprintf(w, "  the %s (%s that only counts answers) costs %s wrk's; meshbench costs %s the %s's\n", f.name, f.what, fw, mf, f.name)
				}
			}
		} else {
			verdict(w, false, "%d conns: no ratio of meshbench to wrk", conns)
		}
		for _, peer := range []string{"oha", "fortio", "vegeta"} {
			if q, ok := pairedRatio(mine, runs[peer]); ok {
				// "Clearly below": at least 10% less.
				verdict(w, q.median <= 0.9, "%d conns: meshbench's CPU per request clearly below %s's: %s", conns, peer, q)
			}
		}
	}
	return nil
}

// cpuRow is one tool's closed-loop run.
type cpuRow struct {
	name, note           string // note says why there are no figures
	done, failed         int64
	cpuSeconds, usPerReq float64
	spread               string // the rounds' lowest and highest µs/req
	// engineUsPerReq is meshbench's own account of its measured phase,
	// without process start-up and exit.
	engineUsPerReq float64
}

// ratio is a median over rounds of one tool's CPU per request over
// another's in the same round, with the rounds' lowest and highest.
type ratio struct{ median, lo, hi float64 }

func (q ratio) String() string {
	return fmt.Sprintf("%.2fx (rounds %.2f–%.2f)", q.median, q.lo, q.hi)
}

// pairedRatio compares a's rounds with b's, round by round. The tools of a
// round run one after the other, so a busy spell of a shared machine
// moves a round's figures together, and each round's ratio is steadier
// than either tool's own figures across rounds. Rounds in which either
// failed are left out; ok is false when none is left.
func pairedRatio(a, b []cpuRow) (q ratio, ok bool) {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if a[i].note == "" && b[i].note == "" {
			rs = append(rs, a[i].usPerReq/b[i].usPerReq)
		}
	}
	if len(rs) == 0 {
		return ratio{}, false
	}
	slices.Sort(rs)
	return ratio{median: rs[len(rs)/2], lo: rs[0], hi: rs[len(rs)-1]}, true
}

// median returns the round with the median CPU per request, and the spread
// of all rounds; a failed round counts only when every round failed.
func median(rows []cpuRow) cpuRow {
	var ok []cpuRow
	for _, r := range rows {
		if r.note == "" {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return rows[0]
	}
	slices.SortFunc(ok, func(a, b cpuRow) int { return cmp.Compare(a.usPerReq, b.usPerReq) })
	m := ok[len(ok)/2]
	m.spread = fmt.Sprintf("%.2f–%.2f", ok[0].usPerReq, ok[len(ok)-1].usPerReq)
	return m
}

func measureCPU(ctx context.Context, t tool, bin, url string, conns int, d time.Duration, tmp string) cpuRow {
	if bin == "" {
		return cpuRow{name: t.name, note: "not installed"}
	}
	args, stdin := t.closed(bin, url, conns, d, tmp)
	p, err := runPinned(ctx, strings.NewReader(stdin), nil, bin, args...)
	if err != nil {
		return cpuRow{name: t.name, note: "failed: " + firstLine(err)}
	}
	done, failed, err := t.count(bin, p, tmp)
	if err != nil || done == 0 {
		return cpuRow{name: t.name, note: fmt.Sprintf("unreadable output: %v", err)}
	}
	r := cpuRow{name: t.name, done: done, failed: failed, cpuSeconds: p.cpu.Seconds(),
		usPerReq: float64(p.cpu.Microseconds()) / float64(done)}
	var self meshbenchReport
	if (t.name == "meshbench" || t.binary == "meshbench") && json.Unmarshal(p.stdout, &self) == nil {
		r.engineUsPerReq = 1e6 * self.ClientCPUS / float64(done)
	}
	return r
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
