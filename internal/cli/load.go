package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/grpcapp"
	"github.com/meshbench/meshbench/internal/load"
)

// loadFlags are the flags of `meshbench load` that are not load.Options.
type loadFlags struct {
	headers  []string
	body     string
	bodyFile string
	output   string
	save     string
	metrics  string
	find     findMaxFlags
}

func newLoadCmd(s Streams, g *globals) *cobra.Command {
	var (
		o load.Options
		f loadFlags
	)
	cmd := &cobra.Command{
		Use:   "load [flags] URL",
		Short: "Generate HTTP load and report latency, throughput and the generator's own cost",
		Long: `Generate HTTP load against URL and report what it measured.

With --rate, an open loop: requests arrive at a constant rate over a fixed
pool of connections, and latency counts from each request's intended send
time, so that a stalled server shows in the tail. They arrive evenly
spaced, or with --arrivals poisson at the times of a Poisson process of
that mean rate (exponential gaps from --seed). Without --rate, a closed
loop: each connection sends its next request when the last one is answered.

The run is bounded by --duration or --requests (default --duration 10s);
--warmup runs first and is left out of the results. Results go to stdout as
text or JSON (--output json); --save also writes the JSON, which
'meshbench load merge' combines exactly with other generators'.

With --find-max, a capacity search instead: the highest open-loop rate at
which the target meets the SLO (--slo-p99, optionally --slo-p50/--slo-p95,
and --slo-errors). The rate grows from --start-rate until the SLO breaks,
the bracket is bisected to --precision with --trial-duration trials, and
--confirmations rounds of --confirm-duration trials at both ends give the
capacity and its 95% interval. A trial in which the generator saturated is
no evidence and is run again. Every trial is printed as it finishes.`,
		Example: `  meshbench load --rate 2000 -c 32 -d 30s http://127.0.0.1:8080/
  meshbench load -c 64 -n 1000000 --output json http://127.0.0.1:8080/ > result.json
  meshbench load --grpc --rate 1000 -c 8 -d 30s http://127.0.0.1:8080
  meshbench load --rate 200 --arrivals poisson --seed 7 -d 30s http://127.0.0.1:8080/
  meshbench load merge gen-1.json gen-2.json
  meshbench load --find-max --slo-p99 10ms -c 64 http://127.0.0.1:8080/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.URL = args[0]
			if err := f.apply(cmd, &o); err != nil {
				return err
			}
			// This process is a load generator: its loops may each keep a
			// CPU's P while they wait.
			load.SpareP(o)
			if f.find.on {
				return runFindMax(cmd, s, g, o, f)
			}
			return runLoad(cmd.Context(), s, g, o, f)
		},
	}
	bindLoadFlags(cmd, &o, &f)
	f.find.register(cmd)
	cmd.AddCommand(newLoadMergeCmd(s))
	return cmd
}

// bindLoadFlags binds `meshbench load`'s flags to o and f; load.Args
// writes them.
func bindLoadFlags(cmd *cobra.Command, o *load.Options, f *loadFlags) {
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.Float64Var(&o.Rate, "rate", 0, "open loop: requests per second (default: closed loop)")
	fl.StringVar(&o.Arrivals, "arrivals", "", "open loop: how sends are spaced at the rate: uniform (evenly, the default) or poisson (exponential gaps of the same mean)")
	fl.Uint64Var(&o.Seed, "seed", 0, "poisson arrivals: seed of the gaps, so that a run can be repeated (default: drawn, and recorded in the result)")
	fl.IntVarP(&o.Connections, "connections", "c", 32, "connections (closed loop: concurrency)")
	fl.DurationVarP(&o.Duration, "duration", "d", 0, "length of the measured phase (default 10s unless --requests)")
	fl.Int64VarP(&o.Requests, "requests", "n", 0, "number of requests in the measured phase")
	fl.DurationVar(&o.Warmup, "warmup", 0, "load to run first and leave out of the results")
	fl.DurationVar(&o.WarmupMax, "warmup-max", 0, "closed loop: let the warm-up go on past --warmup while the throughput still rises, up to this")
	fl.BoolVar(&o.NoKeepAlive, "no-keepalive", false, "open a new connection for every request")
	fl.IntVar(&o.ConnRequests, "conn-requests", 0, "HTTP/1.1: close each connection after this many requests, the next opening a new one (0: keep it)")
	fl.BoolVar(&o.HTTP2, "http2", false, "HTTP/2: h2c (prior knowledge) for http://, ALPN h2 for https://")
	fl.BoolVar(&o.GRPC, "grpc", false, "unary gRPC calls to the test service's method "+grpcapp.Method+" (h2c for http://); the body is the request's bytes")
	fl.StringVarP(&o.Method, "method", "m", "GET", "request method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `request header "Name: value"; repeatable`)
	fl.StringVar(&f.body, "body", "", "request body")
	fl.StringVar(&f.bodyFile, "body-file", "", "file holding the request body")
	fl.Int64Var(&o.BodySize, "body-size", 0, "send this many bytes of filler as each request's body, an upload (use with -m POST)")
	fl.DurationVar(&o.Timeout, "timeout", 30*time.Second, "request timeout, connecting included (0: none)")
	fl.BoolVar(&o.Insecure, "insecure", false, "skip TLS certificate verification")
	outputFlag(fl, &f.output, "report format: text or json", outText, outJSON)
	fl.StringVar(&f.save, "save", "", "also write the full result as JSON to this file")
	fl.StringVar(&f.metrics, "serve-metrics", "", "serve live progress in Prometheus text format on this address, at /metrics")
}

// apply checks the flags that load.Options does not hold and copies them
// in.
func (f *loadFlags) apply(cmd *cobra.Command, o *load.Options) error {
	fl := cmd.Flags()
	if fl.Changed("rate") && !(o.Rate > 0) {
		return errors.New("--rate must be positive")
	}
	if o.Duration == 0 && o.Requests == 0 && !fl.Changed("duration") && !fl.Changed("requests") {
		o.Duration = 10 * time.Second
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("--header %q must look like \"Name: value\"", h)
		}
		if o.Header == nil {
			o.Header = http.Header{}
		}
		o.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	switch {
	case f.body != "" && f.bodyFile != "":
		return errors.New("--body and --body-file cannot both be set")
	case o.BodySize != 0 && (f.body != "" || f.bodyFile != ""):
		return errors.New("--body-size cannot be used with --body or --body-file: it sends filler as the body")
	case f.body != "":
		o.Body = []byte(f.body)
	case f.bodyFile != "":
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return fmt.Errorf("--body-file: %w", err)
		}
		o.Body = b
	}
	return nil
}

func runLoad(ctx context.Context, s Streams, g *globals, o load.Options, f loadFlags) error {
	live := &load.Live{}
	if f.metrics != "" {
		stop, err := serveMetrics(f.metrics, live)
		if err != nil {
			return err
		}
		defer stop()
	}
	if !g.quiet {
		done := make(chan struct{})
		defer close(done)
		go showProgress(s.ErrOut, live, done)
	}
	res, err := load.Run(ctx, o, live)
	var oe *load.OptionError
	if errors.As(err, &oe) {
		return flagError(oe)
	}
	if res == nil {
		return err
	}
	if werr := writeLoadResult(s.Out, res, f.output, f.save); werr != nil {
		return werr
	}
	return err
}

// flagError names the flag behind an invalid load option.
func flagError(e *load.OptionError) error {
	if e.Field == "url" {
		return fmt.Errorf("URL %s", e.Problem)
	}
	return fmt.Errorf("--%s %s", e.Field, e.Problem)
}

func writeLoadResult(w io.Writer, res *load.Result, output, save string) error {
	if save != "" {
		file, err := os.Create(save)
		if err != nil {
			return fmt.Errorf("--save: %w", err)
		}
		err = load.WriteJSON(file, res)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--save: %w", err)
		}
	}
	if output == "json" {
		return load.WriteJSON(w, res)
	}
	return load.WriteText(w, res)
}

// showProgress prints a line a second while the run goes on.
func showProgress(w io.Writer, live *load.Live, done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		p := live.Snapshot()
		switch p.Phase {
		case "warmup":
			fmt.Fprintln(w, "warming up")
		case "measure":
			total := ""
			switch {
			case p.Duration > 0:
				total = fmt.Sprintf("%s/%s", p.Elapsed.Round(time.Second), p.Duration)
			default:
				total = p.Elapsed.Round(time.Second).String()
			}
			reqs := fmt.Sprint(p.Requests)
			if p.Target > 0 {
				reqs += fmt.Sprintf("/%d", p.Target)
			}
			fmt.Fprintf(w, "elapsed %s  requests %s  errors %d\n", total, reqs, p.Errors)
		}
	}
}

// serveMetrics serves live at /metrics on addr until stop is called.
func serveMetrics(addr string, live *load.Live) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--serve-metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", live)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

func newLoadMergeCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge [--output text|json] FILE...",
		Short: "Merge saved load results exactly and print the combined report",
		Long: `Merge results saved with 'meshbench load --save' (or its --output json) from
generators that ran side by side: counts add and histograms merge exactly.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, files []string) error {
			if err := existingArgs("result file", files); err != nil {
				return err
			}
			res, err := load.MergeFiles(files...)
			if err != nil {
				return err
			}
			return writeLoadResult(s.Out, res, output, "")
		},
	}
	outputFlag(cmd.Flags(), &output, "report format: text or json", outText, outJSON)
	return cmd
}
