// Command loadbench compares meshbench's load engine with its peers (wrk,
// hey, oha, fortio, vegeta; h2load for HTTP/2 and ghz for gRPC) against one
// nginx worker (and, for gRPC, a minimal grpc-go server) on this machine, and
// prints the figures the engine's targets are checked by: client CPU per
// request (beside bench/load/floor, the least a client can cost here), the
// p99 of a stalled open-loop run next to the analytic truth,
// pacing precision and achieved rate, and memory over a long run.
// bench/load/run.sh installs the peers and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CPUs: the server and the generators each get their own.
const (
	serverCPU    = 0
	generatorCPU = 1
)

type config struct {
	tools    map[string]string // tool name to binary; empty when missing
	only     string
	long     bool
	duration time.Duration
	repeat   int
	conns    []int
}

func main() {
	cfg := config{tools: map[string]string{}}
	for _, name := range append(toolNames, protocolTools...) {
		flag.Func(name, "path of the "+name+" binary (empty: left out)", func(s string) error {
			cfg.tools[name] = s
			return nil
		})
	}
	flag.StringVar(&cfg.only, "only", "", "run only these parts, comma-separated: cpu, stall, precision, memory, protocols")
	flag.BoolVar(&cfg.long, "long", false, "memory run of 10 million requests instead of 1 million")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "length of each CPU run")
	flag.IntVar(&cfg.repeat, "repeat", 5, "rounds of CPU runs; each tool's median round is reported, and each ratio is the median of the rounds' ratios")
	flag.IntVar(&niceness, "nice", niceness, "scheduling priority (nice) of nginx and the tools, the same for all")
	conns := flag.String("connections", "32,64", "connection counts of the CPU runs")
	flag.Parse()
	for _, c := range strings.Split(*conns, ",") {
		var n int
		if _, err := fmt.Sscan(c, &n); err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "loadbench: -connections %q: want numbers\n", *conns)
			os.Exit(2)
		}
		cfg.conns = append(cfg.conns, n)
	}
	if cfg.tools["meshbench"] == "" {
		fmt.Fprintln(os.Stderr, "loadbench: -meshbench is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, w io.Writer) error {
	srv, err := startNginx(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Fprintf(w, "nginx worker pid %d on CPU %d serving %s; generators on CPU %d; all at nice %d\n\n",
		srv.pid(), serverCPU, srv.url, generatorCPU, niceness)
	parts := []part{
		{"cpu", cpuBench},
		{"stall", stallBench},
		{"precision", precisionBench},
		{"memory", memoryBench},
		{"protocols", protocolsBench},
	}
	only := strings.Split(cfg.only, ",")
	for _, name := range only {
		if cfg.only != "" && !slices.ContainsFunc(parts, func(p part) bool { return p.name == name }) {
			return fmt.Errorf("-only %q: want a list of cpu, stall, precision, memory, protocols", cfg.only)
		}
	}
	for _, p := range parts {
		if cfg.only != "" && !slices.Contains(only, p.name) {
			continue
		}
		if err := p.fn(ctx, cfg, srv, w); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// part is one benchmark of the run.
type part struct {
	name string
	fn   func(context.Context, config, *nginx, io.Writer) error
}

// verdict prints one target's outcome.
func verdict(w io.Writer, ok bool, format string, a ...any) {
	mark := "PASS"
	if !ok {
		mark = "MISS"
	}
	fmt.Fprintf(w, "  [%s] %s\n", mark, fmt.Sprintf(format, a...))
}
