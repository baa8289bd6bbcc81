package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/study"
)

func newStudiesCmd(s Streams, g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "studies",
		Short: "List the built-in studies 'meshbench run --study NAME' runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			presets, err := study.Presets()
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(presets)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tGRAPH\tNAMESPACES\tMESHES\tCELLS\tLAB ESTIMATE\tDESCRIPTION")
			for _, p := range presets {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t~%s\t%s\n", p.Name, p.Graph, p.Namespaces,
					strings.Join(p.Meshes, ","), p.Cells, minutes(p.LabEstimate), p.Description)
			}
			return tw.Flush()
		},
	}
	outputFlag(cmd.Flags(), &output, "output format: text or json", outText, outJSON)
	return cmd
}

// minutes prints a duration rounded to the minute, as "5m" or "1h10m".
func minutes(d time.Duration) string {
	return strings.TrimSuffix(max(d.Round(time.Minute), time.Minute).String(), "0s")
}
