package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report"
)

// reportPrint maps -o onto what the report package prints: nothing for
// text (the files are written and listed), else the rendering on stdout.
func reportPrint(output string) string {
	switch output {
	case outJSON:
		return report.PrintJSON
	case outMarkdown:
		return report.PrintMarkdown
	case outHTML:
		return report.PrintHTML
	}
	return ""
}

// listWritten prints the files a report wrote; with the SMP export on
// stdout, the list is status.
func listWritten(s Streams, o report.Options, files []string) {
	w := s.Out
	if o.SMP == "-" {
		w = s.ErrOut
	}
	for _, f := range files {
		fmt.Fprintln(w, f)
	}
}

func newReportCmd(s Streams, g *globals) *cobra.Command {
	var o report.Options
	var output string
	cmd := &cobra.Command{
		Use:   "report DIR [-o text|json|markdown|html]",
		Short: "Generate a study's report from its results directory: HTML, Markdown, SMP",
		Long: `Generate a study's report from the raw results in DIR, every time the same:
report.html (self-contained, opens offline, charts as inline SVG) and
report.md with its charts in charts/*.svg, written into DIR or the
directory --out names, and listed.

-o json, -o markdown and -o html print the report on stdout instead and
write no file; JSON holds every table and text (the verdict first), not
the charts.

Every figure is the median over its units (the study's independent
deployments) with a distribution-free 95% interval, or the level its design
reaches where that is below 95% (docs/statistics.md);
overheads against the baseline come with their own interval, and one whose
interval includes zero is called no measurable difference. Distorted and
failed cells are listed and left out of every figure.

The study's thresholds, where its study file sets them, are judged again
from the stored results, one line each after the files (on stderr with
-o, whose JSON holds them as "thresholds"): exit 4 when one is not met.

--smp FILE exports the results in the Service Mesh Performance format that
Meshery reads ('-' for stdout); docs/report.md lists what SMP cannot hold.
'meshbench compare A B' compares two runs.`,
		Example: `  meshbench report results/bookinfo-20260101-120000
  meshbench report results/run1 --out /tmp/report
  meshbench report results/run1 -o json | jq '.sections[0].blocks[0].table'
  meshbench report results/run1 --smp run1-smp.json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.Compare && len(args) != 1 {
				return usageErrorf("report takes one results directory; to compare two, use 'meshbench compare A B'")
			}
			if err := existingArgs("results directory", args); err != nil {
				return err
			}
			if len(args) == 1 && isControlPlaneResults(args[0]) {
				return controlPlaneReport(s, args[0])
			}
			p := reportPrint(output)
			if o.Compare {
				fmt.Fprintln(s.ErrOut, "meshbench: report --compare is deprecated; use 'meshbench compare A B'")
			}
			o.Dirs, o.Stdout, o.Logger, o.Print = args, s.Out, g.logger(s), p
			files, judged, err := report.GenerateJudged(cmd.Context(), o)
			listWritten(s, o, files)
			if err != nil {
				return err
			}
			// After the files, as run prints them after its directory;
			// on stderr where stdout holds a rendering.
			w := s.Out
			if p != "" || o.SMP == "-" {
				w = s.ErrOut
			}
			return printThresholds(w, judged)
		},
	}
	f := cmd.Flags()
	outputFlag(f, &output, "output: text (write the files, list them), json, markdown or html (print the report, write nothing)", outText, outJSON, outMarkdown, outHTML)
	f.StringVar(&o.Out, "out", "", "directory to write the reports into (default the results directory)")
	f.StringSliceVar(&o.Formats, "format", nil, "which files to write: html, md, smp (default html,md)")
	f.StringVar(&o.SMP, "smp", "", "also export the results in the SMP format to this file; - for stdout")
	f.BoolVar(&o.Compare, "compare", false, "compare two results directories: use 'meshbench compare A B'")
	f.BoolVar(&o.FailOnRegression, "fail-on-regression", false, "with --compare, exit 3 when DIR_B regressed (see meshbench compare)")
	f.StringVar(&o.Baseline, "baseline", "", "the mesh overheads are measured against (default baseline)")
	_ = f.MarkDeprecated("format", "use -o to print a rendering, or --smp FILE for the SMP export; --format still selects the files written")
	_ = f.MarkDeprecated("compare", "use 'meshbench compare A B'")
	_ = f.MarkHidden("fail-on-regression")
	return cmd
}

func newCompareCmd(s Streams, g *globals) *cobra.Command {
	o := report.Options{Compare: true}
	var output, gate string
	cmd := &cobra.Command{
		Use:   "compare A B [-o text|json|markdown|html]",
		Short: "Compare two runs of the same study figure by figure; exit 3 on a measurable regression with --fail-on-regression",
		Long: `Compare two results directories of the same study, A (before) and B
(after), figure by figure, each difference with its 95% interval: which
figures of B are measurably worse, better, or not measurably different.
The comparison is printed (as Markdown, or -o json or html) and nothing
is written; --out DIR writes compare.html and compare.md into DIR and
lists them. Neither results directory is ever written.

--fail-on-regression is the regression gate, for CI: it exits with code 3
when B regressed on the gate's primary family (--gate, by default each
mesh's added p50, added p99 and data-plane CPU per app CPU, its CPU per
request in units of the app's, at the study's main configuration; where
that is a closed loop, which has no added latency (Little's law), each
mesh's throughput, a drop being worse, in place of the added figures),
judged by exact rank tests under Holm's procedure so
that comparing two runs of one commit fails at most 5% of the time
whatever the family's size, each regression worse by at least 5%; every
other figure is reported and never gates. It refuses, with exit code 1
and before writing anything, runs whose offered load, scaling, proxy
build, worker count, CPU model or CPU limits differ, naming each
difference, unless --vary names it as the variable under test.`,
		Example: `  meshbench compare results/last results/new
  meshbench compare results/last results/new --fail-on-regression -o markdown
  meshbench compare results/envoy-1.39 results/envoy-1.40 --fail-on-regression --vary proxy-build`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := existingArgs("results directory", args); err != nil {
				return err
			}
			p := reportPrint(output)
			// Text without --out is the comparison in Markdown on stdout:
			// a comparison writes a file only where --out asks.
			if p == "" && o.Out == "" {
				p = report.PrintMarkdown
			}
			o.Dirs, o.Stdout, o.Logger, o.Print = args, s.Out, g.logger(s), p
			var err error
			if o.Gate.Figures, err = analysis.ParseGateFigures(gate); err != nil {
				return usageErrorf("--gate: %v", err)
			}
			for _, v := range o.Vary {
				if !slices.Contains(analysis.VaryKinds, v) {
					return usageErrorf("--vary %q: not a set-up difference the gate knows; one of %s", v, strings.Join(analysis.VaryKinds, ", "))
				}
			}
			files, err := report.Generate(cmd.Context(), o)
			listWritten(s, o, files)
			return err
		},
	}
	f := cmd.Flags()
	outputFlag(f, &output, "output: text (Markdown on stdout, or with --out write the files and list them), json, markdown or html (print the comparison, write nothing)", outText, outJSON, outMarkdown, outHTML)
	f.StringVar(&o.Out, "out", "", "directory to write compare.html and compare.md into (default: write nothing, print the comparison)")
	f.BoolVar(&o.FailOnRegression, "fail-on-regression", false, "exit 3 when B regressed on the gate's family (see --gate); refuse runs whose set-ups differ outside --vary")
	f.StringVar(&gate, "gate", strings.Join(analysis.DefaultGate, ","), "the gate's primary family: figures of every mesh at the main configuration, added:<latency> for an overhead over the baseline (in a closed loop, the throughput in its place)")
	f.StringSliceVar(&o.Vary, "vary", nil, "set-up differences the comparison is about, which the gate accepts: "+strings.Join(analysis.VaryKinds, ", "))
	f.StringVar(&o.Baseline, "baseline", "", "the mesh overheads are measured against (default baseline)")
	return cmd
}
