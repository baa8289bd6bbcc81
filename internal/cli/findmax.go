package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/search"
)

// findMaxFlags are the flags of `meshbench load --find-max`.
type findMaxFlags struct {
	on  bool
	cfg search.Config
}

func (f *findMaxFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "find-max", false, "search for the highest rate that meets the SLO (--slo-p99) instead of one run")
	fl.DurationVar(&f.cfg.SLO.P99, "slo-p99", 0, "--find-max: p99 latency limit, such as 10ms")
	fl.DurationVar(&f.cfg.SLO.P95, "slo-p95", 0, "--find-max: p95 latency limit (optional)")
	fl.DurationVar(&f.cfg.SLO.P50, "slo-p50", 0, "--find-max: p50 latency limit (optional)")
	fl.Float64Var(&f.cfg.SLO.MaxErrorRate, "slo-errors", 0.001, "--find-max: highest share of failed requests, such as 0.001 for 0.1%")
	fl.Float64Var(&f.cfg.Start, "start-rate", 100, "--find-max: the first rate tried, requests per second")
	fl.Float64Var(&f.cfg.MaxRate, "max-rate", 0, "--find-max: the highest rate tried (0: no limit)")
	fl.DurationVar(&f.cfg.Trial, "trial-duration", 3*time.Second, "--find-max: shortest measured length of a trial (a trial at a low rate runs until it carries the requests its percentile needs)")
	fl.IntVar(&f.cfg.Trials, "trials", search.DefaultTrials, "--find-max: trials that locate the capacity once the SLO has been met and broken")
	fl.DurationVar(&f.cfg.Budget, "budget", 0, "--find-max: the most measured trial time the search may take (0: no limit)")
}

// runFindMax runs a capacity search against the URL and prints each trial
// as it finishes, then the capacity.
func runFindMax(cmd *cobra.Command, s Streams, g *globals, o load.Options, f loadFlags) error {
	fl := cmd.Flags()
	for _, name := range []string{"rate", "requests", "duration", "save", "serve-metrics"} {
		if fl.Changed(name) {
			return fmt.Errorf("--%s does not apply to --find-max: the search sets each trial's rate and length", name)
		}
	}
	if f.find.cfg.SLO.P99 == 0 && f.find.cfg.SLO.P95 == 0 && f.find.cfg.SLO.P50 == 0 {
		return errors.New("--find-max needs a latency limit: --slo-p99 (or --slo-p50/--slo-p95)")
	}
	if !fl.Changed("warmup") {
		o.Warmup = time.Second
	}
	cfg := f.find.cfg
	text := f.output == "text"
	if text {
		fmt.Fprintf(s.Out, "searching %s for the highest rate with %s\n", o.URL, cfg.SLO)
		writeTrialHeader(s.Out)
	}
	n := 0
	res, err := search.Run(cmd.Context(), cfg, load.SearchTrial(o, nil), func(t search.Trial) {
		n++
		if text {
			writeTrial(s.Out, n, t)
		} else if !g.quiet {
			writeTrial(s.ErrOut, n, t)
		}
	})
	var oe *load.OptionError
	if errors.As(err, &oe) {
		return flagError(oe)
	}
	if err != nil && len(res.Trials) == 0 {
		return err
	}
	if text {
		writeCapacity(s.Out, res)
	} else {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return jerr
		}
	}
	return err
}

func writeTrialHeader(w io.Writer) {
	fmt.Fprintf(w, "%5s  %-8s %10s %10s %9s %9s %9s %8s  %s\n",
		"trial", "phase", "rate/s", "achieved/s", "p50 ms", "p99 ms", "errors", "length", "verdict")
}

func writeTrial(w io.Writer, n int, t search.Trial) {
	verdict := string(t.Verdict)
	if t.Why != "" {
		verdict += ": " + t.Why
	}
	fmt.Fprintf(w, "%5d  %-8s %10.1f %10.1f %9.3f %9.3f %8.3f%% %8s  %s\n",
		n, t.Phase, t.Rate, t.Achieved, t.P50Ms, t.P99Ms, 100*t.ErrorRate(), t.Duration, verdict)
}

func writeCapacity(w io.Writer, r search.Result) {
	switch {
	case r.RPS == 0:
		fmt.Fprintf(w, "no capacity: %s\n", r.Note)
		return
	default:
		fmt.Fprintf(w, "capacity: %s at %s\n", r.Describe("req/s"), r.SLO)
	}
	fmt.Fprintf(w, "bracket: met at %.1f req/s", r.Lower)
	if r.Upper > 0 {
		fmt.Fprintf(w, ", broken at %.1f req/s", r.Upper)
	}
	fmt.Fprintln(w)
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
}
