package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/app"
	"github.com/meshbench/meshbench/internal/topology"
)

func newAppCmd(s Streams, g *globals) *cobra.Command {
	var (
		o         app.Options
		graph     string
		upstreams []string
		gcPercent int
	)
	cmd := &cobra.Command{
		Use:   "app --graph FILE|NAME --service NAME [--version V] [--listen ADDR] [--upstream NAME=HOST:PORT]...",
		Short: "Run one service of a service graph: the test application meshes are measured on",
		Long: `Run one service of a service graph. It serves HTTP/1.1, h2c and unary gRPC
(meshbench.App/Call) on one port,
/healthz and /readyz, and on any other path runs the service's script of
downstream calls and answers with the JSON call tree.

Built-in graphs: ` + strings.Join(topology.BuiltinNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Graph, err = topology.Load(graph); err != nil {
				return err
			}
			if o.Upstreams, err = parseUpstreams(upstreams); err != nil {
				return err
			}
			o.Logger = g.logger(s)
			app.TuneRuntime(gcPercent)
			return app.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&graph, "graph", "", "graph: a built-in name or a YAML file (required)")
	f.StringVar(&o.Service, "service", "", "the service to run (required)")
	f.StringVar(&o.Version, "version", "", "the version to run, when the service has several")
	f.StringVar(&o.Namespace, "namespace", "", "namespace to report in answers")
	f.StringVar(&o.Pod, "pod", "", "pod (replica) name to report in answers")
	f.StringVar(&o.Listen, "listen", "", "address to serve on (default \":<service port>\")")
	f.StringArrayVar(&upstreams, "upstream", nil, "NAME=HOST:PORT of a downstream service (default NAME:<its port>); repeatable")
	f.DurationVar(&o.CallTimeout, "call-timeout", app.DefaultCallTimeout, "timeout of each downstream call")
	f.BoolVar(&o.H2C, "h2c-upstream", false, "call the downstreams the graph calls over http with h2c (HTTP/2 with prior knowledge) instead; h2c and grpc edges keep their protocol")
	f.IntVar(&gcPercent, "gc-percent", app.DefaultGCPercent, "Go GC target percentage (GOGC); higher trades memory for CPU")
	_ = cmd.MarkFlagRequired("graph")
	_ = cmd.MarkFlagRequired("service")
	cmd.AddCommand(newServeGraphCmd(s, g))
	return cmd
}

func newServeGraphCmd(s Streams, g *globals) *cobra.Command {
	var (
		o     app.GraphOptions
		graph string
	)
	cmd := &cobra.Command{
		Use:   "serve-graph --graph FILE|NAME [--listen ADDR] [--namespaces N]",
		Short: "Run a whole graph in one process on loopback, for development",
		Long: `Run every service of a graph in one process, each on its own loopback port.
The entry of ns-1 listens on --listen, the entry of ns-i on the port i-1
above it; the other services take free ports. Prints one line per service:
namespace, service, URL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Graph, err = topology.Load(graph); err != nil {
				return err
			}
			o.Logger = g.logger(s)
			return app.ServeGraph(cmd.Context(), o, s.Out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&graph, "graph", "", "graph: a built-in name or a YAML file (required)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:8080", "address of the entry service of ns-1")
	f.IntVar(&o.Namespaces, "namespaces", 1, "number of isolated copies of the graph (ns-1 ... ns-N)")
	f.DurationVar(&o.CallTimeout, "call-timeout", app.DefaultCallTimeout, "timeout of each downstream call")
	f.BoolVar(&o.H2C, "h2c-upstream", false, "call http edges over h2c instead of HTTP/1.1; h2c and grpc edges keep their protocol")
	_ = cmd.MarkFlagRequired("graph")
	return cmd
}

// parseUpstreams reads repeated NAME=HOST:PORT flags.
func parseUpstreams(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, addr, ok := strings.Cut(f, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("--upstream %q: want NAME=HOST:PORT", f)
		}
		out[name] = addr
	}
	return out, nil
}
