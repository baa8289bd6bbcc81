package cli

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/predict"
	"github.com/meshbench/meshbench/internal/topology"
)

func newProfileCmd(s Streams, _ *globals) *cobra.Command {
	var out, file string
	cmd := &cobra.Command{
		Use:   "profile RESULTS_DIR [--out DIR | --file FILE]",
		Short: "Extract a profile file for 'meshbench predict' from a profiling run's results",
		Long: `Read a profiling run's results (meshbench run --study profile) and write
the profile file 'meshbench predict --profile' reads: per mesh, each proxy
role's idle and per-request CPU by payload and protocol, its memory at rest
and per known service and connection, and the latency one hop adds as a
distribution, with the run's provenance (CPU model, kernel, Envoy version).
Every figure is computed from the stored cells; failed and distorted cells
are left out, noisy ones kept and listed (noisy_cells). predict also reads
the results directory directly.`,
		Example: `  meshbench run --study profile --out results/profile
  meshbench profile results/profile            # writes results/profile/profile.json
  meshbench predict --profile results/profile/profile.json --graph my-graph.yaml --namespaces 20 --rate 300`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := existing("results directory", args[0]); err != nil {
				return err
			}
			p, err := predict.Extract(args[0])
			if err != nil {
				return err
			}
			if file == "" {
				file = filepath.Join(cmp.Or(out, args[0]), "profile.json")
			}
			if err := p.Write(file); err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "%s: %d meshes, protocols %v, payloads %v B\n", file, len(p.Meshes), p.Protocols, p.Payloads)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write profile.json into (default RESULTS_DIR)")
	cmd.Flags().StringVar(&file, "file", "", "profile file to write, instead of profile.json in --out")
	cmd.MarkFlagsMutuallyExclusive("out", "file")
	return cmd
}

type predictFlags struct {
	profile string
	graph   string
	output  string
	o       predict.Options
}

func newPredictCmd(s Streams, _ *globals) *cobra.Command {
	var f predictFlags
	cmd := &cobra.Command{
		Use:   "predict --profile P --graph G --namespaces N --rate R",
		Short: "Predict each mesh's added latency, CPU, memory, nodes and dollars for your own graph",
		Long: `Predict, from a profile ('meshbench profile', or a profiling run's results
directory), what each profiled mesh adds to a service graph (a built-in or a
graph file in the workload format) at a tenant count and entry rate, before
installing anything:

- added latency p50/p95/p99 at the entry: each hop's added-latency
  distribution, summed along sequential calls, maximized over parallel ones;
- CPU and memory of each mesh component and in total: idle CPU per instance
  plus per-request cost times each hop's rate; memory per instance, per
  known service and per connection;
- nodes and monthly dollars through the cost model: requests packed onto
  --machine nodes, and the predicted consumption at unit prices.

Each figure has an interval from the profile's spread. A graph that uses a
protocol, or answers with a payload, outside what the profile measured is
refused, naming the field. The output says the error class the predictor
was validated to on the lab (bench/predict, docs/predict.md).`,
		Example: `  meshbench predict --profile results/profile --graph my-graph.yaml --namespaces 20 --rate 300
  meshbench predict --profile profile.json --graph bookinfo --namespaces 4 --rate 50 -o json
  meshbench predict --profile profile.json --graph tiered --namespaces 50 --rate 450 --connections 100 -o html > predict.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPredict(s, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "", "profile file, or a profiling run's results directory (required)")
	fl.StringVar(&f.graph, "graph", "", "service graph: a built-in ("+fmt.Sprint(topology.BuiltinNames())+") or a graph file (required)")
	fl.IntVar(&f.o.Namespaces, "namespaces", 1, "tenants: copies of the graph, one per namespace")
	fl.Float64Var(&f.o.Rate, "rate", 0, "each namespace's entry rate in requests per second (required)")
	fl.IntVar(&f.o.Connections, "connections", 32, "each namespace's client connections to the entry")
	fl.IntVar(&f.o.Nodes, "nodes", 0, "nodes running a node proxy (default: the nodes the cost model packs the pods onto)")
	fl.StringVar(&f.o.Machine, "machine", "", "cost model machine type (default n2-standard-8)")
	fl.StringSliceVar(&f.o.Meshes, "mesh", nil, "meshes to predict (default every mesh in the profile)")
	outputFlag(fl, &f.output, "text, json or html", predict.OutputText, predict.OutputJSON, predict.OutputHTML)
	return cmd
}

// runPredict checks the flags, reads the profile and the graph, and writes
// the prediction.
func runPredict(s Streams, f predictFlags) error {
	if f.profile == "" {
		return fmt.Errorf("--profile is required: a profile file ('meshbench profile DIR') or a profiling run's results directory ('meshbench run --study profile')")
	}
	if f.graph == "" {
		return fmt.Errorf("--graph is required: a built-in graph (%v) or a graph file", topology.BuiltinNames())
	}
	if f.o.Rate <= 0 {
		return fmt.Errorf("--rate %g: want each namespace's entry rate in requests per second, above 0", f.o.Rate)
	}
	g, err := topology.Load(f.graph)
	if err != nil {
		return fmt.Errorf("--graph: %w", err)
	}
	if err := existing("--profile", f.profile); err != nil {
		return err
	}
	p, err := predict.ReadUnitCosts(f.profile)
	if err != nil {
		return err
	}
	f.o.Graph, f.o.GraphName = g, f.graph
	pr, err := predict.Predict(p, f.o)
	if err != nil {
		return err
	}
	return pr.Write(s.Out, f.output)
}
