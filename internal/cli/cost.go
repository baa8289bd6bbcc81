package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/topology"
)

func newCostCmd(s Streams, _ *globals) *cobra.Command {
	var o cost.Options
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Price what a mesh adds to the monthly bill",
		Long: `Price what a mesh adds to the monthly bill.

By requests (the default): pack the workload's pods, each mesh's sidecars,
per-node pods, control plane and waypoints onto the fewest nodes of a
machine type, and price the nodes against the no-mesh baseline:

  meshbench cost --example solo-2024
  meshbench cost --workload tiered --namespaces 50 --pod-cpu 700m --pod-mem 500Mi \
      --node n2-standard-8 --mesh sidecar,ambient

By consumption (--usage FILE, a list of measured per-role CPU and memory):
price the data plane at $/vCPU-month and $/GB-month, derived from two pairs
of machine types or given, and project it to your request rate and nodes.

From a study's results (--results DIR), at its last load configuration:
the data plane's measured consumption priced as above, its CPU per 1000
requests a second, and the requests the study recorded packed onto --node
machines. Failed and distorted cells are skipped and counted. --nodes
scales node-proxy memory to your node count; --rps projects the CPU to
your rate by the split the study's capacity search fitted (idle cores plus
cores per request a second), which results without a search do not have,
and only up to each mesh's measured capacity unless --extrapolate:

  meshbench cost --results results/quick-20260101-120000 --rps 150 --nodes 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for flag, path := range map[string]string{"--results": o.ResultsDir, "--usage": o.UsageFile, "--catalog": o.CatalogFile, "--footprints": o.FootprintsFile} {
				if err := existing(flag, path); err != nil {
					return err
				}
			}
			return cost.Run(s.Out, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Example, "example", "", "a built-in study's inputs: solo-2024")
	f.StringVar(&o.Workload, "workload", "", "service graph: a built-in one ("+strings.Join(topology.BuiltinNames(), ", ")+") or a graph file")
	f.IntVar(&o.Namespaces, "namespaces", 0, "copies of the workload, one per namespace (default 1)")
	f.StringVar(&o.PodCPU, "pod-cpu", "", "CPU request of every application pod, replacing the graph's (e.g. 700m)")
	f.StringVar(&o.PodMemory, "pod-mem", "", "memory request of every application pod, replacing the graph's (e.g. 500Mi)")
	f.StringVar(&o.Node, "node", "", "machine type of the nodes (default "+cost.DefaultNode+")")
	var priced []string
	for _, fp := range mesh.Footprints() {
		priced = append(priced, fp.Name)
	}
	f.StringSliceVar(&o.Meshes, "mesh", nil, "meshes to price (default all): "+strings.Join(priced, ", ")+" or your own")
	f.StringVar(&o.CatalogFile, "catalog", "", "YAML file of machine types and prices that replace or extend the built-in catalog")
	f.StringVar(&o.FootprintsFile, "footprints", "", "YAML file of mesh footprints that replace or extend the built-in ones")
	outputFlag(f, &o.Output, "text or json", outText, outJSON)
	f.StringVar(&o.UsageFile, "usage", "", "price measured consumption from this YAML/JSON list of usage records")
	f.Float64Var(&o.VCPUMonth, "vcpu-month", 0, "price of a vCPU for a month, instead of deriving it")
	f.Float64Var(&o.GBMonth, "gb-month", 0, "price of a GB of memory for a month, instead of deriving it")
	f.StringSliceVar(&o.CPUPair, "cpu-pair", nil, "two machine types with equal memory to derive the vCPU price from (default n2-standard-4,n2-highmem-2)")
	f.StringSliceVar(&o.MemPair, "mem-pair", nil, "two machine types with equal vCPUs to derive the GB price from (default n2-highmem-4,n2-standard-4)")
	f.Float64Var(&o.ProjectRPS, "rps", 0, "project consumption to this request rate")
	f.IntVar(&o.ProjectNodes, "nodes", 0, "project node-proxy memory to this many nodes")
	f.BoolVar(&o.Extrapolate, "extrapolate", false, "with --results and --rps: project the fitted CPU beyond a mesh's measured capacity")
	f.StringVar(&o.ResultsDir, "results", "", "price a study's results directory: its measured consumption and recorded requests")
	return cmd
}
