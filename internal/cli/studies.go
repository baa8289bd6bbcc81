package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
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
			// The control-plane study has no study file, but runs by its
			// name as the presets do.
			if cp, ok := controlPlaneInfo(); ok {
				presets = append(presets, cp)
			}
			if output == "json" {
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(presets)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tGRAPH\tNAMESPACES\tMESHES\tCELLS\tLAB ESTIMATE\tDESCRIPTION")
			for _, p := range presets {
				graph, namespaces, estimate := "-", "-", "-"
				if p.Graph != "" {
					graph, namespaces = p.Graph, strconv.Itoa(p.Namespaces)
				}
				if p.LabEstimate > 0 {
					estimate = fmt.Sprintf("~%s (noisy host: ~%s)", minutes(p.LabEstimate), minutes(p.LabNoisyEstimate))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Name, graph, namespaces,
					strings.Join(p.Meshes, ","), p.Cells, estimate, p.Description)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err = fmt.Fprintln(s.Out, "\n"+noisyHostNote)
			return err
		},
	}
	outputFlag(cmd.Flags(), &output, "output format: text or json", outText, outJSON)
	return cmd
}

// noisyHostNote says what the second estimate allows for.
const noisyHostNote = "The estimate is for a quiet host. On a noisy one (another job's load, a hypervisor's steal) the noise guard " +
	"runs the cells it catches again and the runner waits for the host to quiet, up to the second figure " +
	"(every cell measured again as often as noise.retries allows, the most rounds the study's repetitions allow, the whole wait)."

// minutes prints a duration rounded to the minute, as "5m" or "1h10m".
func minutes(d time.Duration) string {
	return strings.TrimSuffix(max(d.Round(time.Minute), time.Minute).String(), "0s")
}
