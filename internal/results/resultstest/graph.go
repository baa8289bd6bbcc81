package resultstest

import (
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// writeGraph keeps the built-in graph a fixture's study deployed as the
// results directory's graph.yaml, as the runner does.
func writeGraph(dir, name string) error {
	g, err := topology.Builtin(name)
	if err != nil {
		return err
	}
	data, err := g.Marshal()
	if err != nil {
		return err
	}
	return results.WriteFile(dir, results.GraphFile, data)
}
