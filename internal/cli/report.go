package cli

import (
	"fmt"

	"github.com/spf13/cobra"

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

Every figure is the median over repetitions with a 95% bootstrap interval;
overheads against the baseline come with their own interval, and one whose
interval includes zero is called no measurable difference. Distorted and
failed cells are listed and left out of every figure.

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
			files, err := report.Generate(cmd.Context(), o)
			listWritten(s, o, files)
			return err
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
	var output string
	cmd := &cobra.Command{
		Use:   "compare A B [-o text|json|markdown|html]",
		Short: "Compare two runs of the same study figure by figure; exit 3 on a measurable regression with --fail-on-regression",
		Long: `Compare two results directories of the same study, A (before) and B
(after), figure by figure, each difference with its 95% interval: which
figures of B are measurably worse, better, or not measurably different.
The comparison is printed (as Markdown, or -o json or html) and nothing
is written; --out DIR writes compare.html and compare.md into DIR and
lists them. Neither results directory is ever written.

--fail-on-regression exits with code 3 when B regressed: p50, p99 or
data-plane CPU per request worse beyond the 95% interval by at least 5%,
for CI; 0 when it did not.`,
		Example: `  meshbench compare results/last results/new
  meshbench compare results/last results/new --fail-on-regression -o markdown`,
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
			files, err := report.Generate(cmd.Context(), o)
			listWritten(s, o, files)
			return err
		},
	}
	f := cmd.Flags()
	outputFlag(f, &output, "output: text (Markdown on stdout, or with --out write the files and list them), json, markdown or html (print the comparison, write nothing)", outText, outJSON, outMarkdown, outHTML)
	f.StringVar(&o.Out, "out", "", "directory to write compare.html and compare.md into (default: write nothing, print the comparison)")
	f.BoolVar(&o.FailOnRegression, "fail-on-regression", false, "exit 3 when B regressed: p50, p99 or data-plane CPU per request worse beyond the interval by at least 5%")
	f.StringVar(&o.Baseline, "baseline", "", "the mesh overheads are measured against (default baseline)")
	return cmd
}
