package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/report"
)

func newReportCmd(s Streams, g *globals) *cobra.Command {
	var o report.Options
	cmd := &cobra.Command{
		Use:   "report DIR | report --compare DIR_A DIR_B",
		Short: "Generate a study's report from its results directory: HTML, Markdown, SMP",
		Long: `Generate a study's report from the raw results in DIR, every time the same:
report.html (self-contained, opens offline, charts as inline SVG) and
report.md with its charts in charts/*.svg, written into DIR or --out.

Every figure is the median over repetitions with a 95% bootstrap interval;
overheads against the baseline come with their own interval, and one whose
interval includes zero is called no measurable difference. Distorted and
failed cells are listed and left out of every figure.

--compare DIR_A DIR_B compares two runs of the same study figure by figure
(compare.html and compare.md, in DIR_B or --out); --fail-on-regression
exits 3 when DIR_B regressed (p50, p99 or data-plane CPU per request
worse beyond the 95% interval by at least 5%), for CI. --smp FILE (or --format
smp) exports the results in the Service Mesh Performance format that
Meshery reads; docs/report.md lists what SMP cannot hold.`,
		Example: `  meshbench report results/bookinfo-20260101-120000
  meshbench report results/run1 --out /tmp/report --format html
  meshbench report results/run1 --smp run1-smp.json
  meshbench report --compare results/last results/new --fail-on-regression`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && isControlPlaneResults(args[0]) {
				return controlPlaneReport(s, args[0])
			}
			o.Dirs, o.Stdout, o.Logger = args, s.Out, g.logger(s)
			files, err := report.Generate(cmd.Context(), o)
			// With the SMP export on stdout, the list of files is status.
			w := s.Out
			if o.SMP == "-" {
				w = s.ErrOut
			}
			for _, f := range files {
				fmt.Fprintln(w, f)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "", "directory to write the reports into (default: the results directory, or DIR_B with --compare)")
	f.StringSliceVar(&o.Formats, "format", nil, "what to write: html, md, smp (default html,md)")
	f.StringVar(&o.SMP, "smp", "", "also export the results in the SMP format to this file; - for stdout")
	f.BoolVar(&o.Compare, "compare", false, "compare two results directories of the same study: DIR_A DIR_B")
	f.BoolVar(&o.FailOnRegression, "fail-on-regression", false, "with --compare, exit 3 when DIR_B regressed: p50, p99 or data-plane CPU per request worse beyond the interval by at least 5%")
	f.StringVar(&o.Baseline, "baseline", "", "the mesh overheads are measured against (default baseline)")
	return cmd
}
