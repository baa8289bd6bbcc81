// Command predict measures the predictor's accuracy on the lab: it
// profiles once (meshbench run --study profile), predicts bookinfo and the
// tiered graph at 2 and 4 tenants for each mesh, runs those on the lab
// (one study per graph, the tenant count swept, one generator per tenant
// at -rate), and prints each figure's prediction beside its measurement
// and their error: the data plane's CPU and memory, and the p50 latency
// the mesh adds over the baseline. The measurement is the peer each
// prediction is held against, in the same run. It needs root, Envoy
// (scripts/setup.sh) and a built meshbench (make build).
//
//	go run ./bench/predict -bin bin/meshbench -out /tmp/predict
//	go run ./bench/predict -profile results/profile -bin bin/meshbench   # skip profiling
//	go run ./bench/predict -profile results/profile -results /tmp/predict/bookinfo,/tmp/predict/tiered
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/predict"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

type config struct {
	bin, profile, out, results string
	graphs, meshes             []string
	tenants                    []int
	rate                       float64
	connections, repetitions   int
	duration, warmup           time.Duration
}

func main() {
	var c config
	var graphs, meshes, tenants string
	flag.StringVar(&c.bin, "bin", os.Getenv("MESHBENCH_BIN"), "meshbench binary (default $MESHBENCH_BIN)")
	flag.StringVar(&c.profile, "profile", "", "a profile file or profiling run's results to use instead of profiling")
	flag.StringVar(&c.out, "out", "", "directory to keep the runs' results in (default a temporary directory, removed at the end)")
	flag.StringVar(&c.results, "results", "", "finished accuracy runs to read instead of running, comma-separated")
	flag.StringVar(&graphs, "graphs", "bookinfo,tiered", "graphs to predict and run")
	flag.StringVar(&meshes, "meshes", "baseline,sidecar,ambient,ambient-waypoint", "meshes to predict and run (baseline is needed for added latency)")
	flag.StringVar(&tenants, "tenants", "2,4", "tenant counts")
	flag.Float64Var(&c.rate, "rate", 25, "each tenant's entry rate, req/s")
	flag.IntVar(&c.connections, "connections", 8, "each tenant's generator connections")
	flag.IntVar(&c.repetitions, "repetitions", 3, "repetitions of each cell (figures are medians over them)")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "each cell's measured phase")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "each cell's warm-up")
	flag.Parse()
	c.graphs, c.meshes = strings.Split(graphs, ","), strings.Split(meshes, ",")
	for _, s := range strings.Split(tenants, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench/predict: -tenants %q: want counts such as 2,4\n", tenants)
			os.Exit(2)
		}
		c.tenants = append(c.tenants, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench/predict:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, c config) error {
	if c.out == "" {
		tmp, err := os.MkdirTemp("", "meshbench-predict-")
		if err != nil {
			return err
		}
		// The figures are printed; the runs behind them are kept only in
		// a directory the user named.
		defer os.RemoveAll(tmp)
		c.out = tmp
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if c.profile == "" {
		c.profile = filepath.Join(c.out, "profile")
		if err := meshbench(ctx, c.bin, "run", "--study", "profile", "--out", c.profile); err != nil {
			return err
		}
	}
	var dirs []string
	if c.results != "" {
		dirs = strings.Split(c.results, ",")
	} else {
		for _, g := range c.graphs {
			dir, err := runGraph(ctx, c, g)
			if err != nil {
				return err
			}
			dirs = append(dirs, dir)
		}
	}
	// The profile is read after the runs, so that a profile the predictor
	// cannot read still leaves the runs to compare with -results.
	p, err := predict.ReadUnitCosts(c.profile)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "profile: %s (%s)\n", p.Source, p.Provenance.Platform.CPUModel)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\ttenants\tmesh\tfigure\tpredicted\tinterval\tmeasured\terror %\t")
	for _, dir := range dirs {
		if err := compare(tw, p, c, dir); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// runGraph writes and runs one graph's accuracy study: the tenant counts
// swept, one generator per tenant at the rate, no scaling.
func runGraph(ctx context.Context, c config, graph string) (string, error) {
	var ns []string
	for _, n := range c.tenants {
		ns = append(ns, strconv.Itoa(n))
	}
	src := fmt.Sprintf(`apiVersion: meshbench.dev/v1alpha1
kind: Study
name: predict-%s
description: bench/predict's accuracy run for %s
workload:
  graph: %s
meshes: [%s]
load:
  rate: %g
  connections: %d
  duration: %s
  warmup: %s
  generators: per-namespace
sweeps:
- param: namespaces
  values: [%s]
repetitions: %d
`, graph, graph, graph, strings.Join(c.meshes, ", "), c.rate, c.connections, c.duration, c.warmup, strings.Join(ns, ", "), c.repetitions)
	file := filepath.Join(c.out, graph+".yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		return "", err
	}
	dir := filepath.Join(c.out, graph)
	return dir, meshbench(ctx, c.bin, "run", file, "--out", dir)
}

func meshbench(ctx context.Context, bin string, args ...string) error {
	if bin == "" {
		return fmt.Errorf("give -bin bin/meshbench (make build)")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "bench/predict: %s\n", strings.Join(cmd.Args, " "))
	return cmd.Run()
}

// measuredFigs is one mesh's measurement at one tenant count, by
// repetition: its proxies' CPU and memory, and its p50 latency. Each is
// read as the median over repetitions, so that one repetition the host
// disturbed does not move it.
type measuredFigs struct {
	cores, mem, p50 []float64
}

// compare predicts each mesh of a finished accuracy run at each of its
// tenant counts and prints the errors.
func compare(w io.Writer, p *predict.UnitCosts, c config, dir string) error {
	ix, err := results.ReadIndex(dir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, results.GraphFile))
	if err != nil {
		return err
	}
	g, err := topology.Parse(data)
	if err != nil {
		return err
	}
	figs := map[string]map[int]*measuredFigs{}
	var order []string
	for _, s := range ix.Cells {
		if s.Status != results.StatusOK || s.Noisy {
			continue
		}
		n, _ := strconv.Atoi(s.Params["namespaces"])
		cell, err := results.ReadCell(dir, s)
		if err != nil {
			return err
		}
		if figs[s.Mesh] == nil {
			figs[s.Mesh] = map[int]*measuredFigs{}
			order = append(order, s.Mesh)
		}
		f := figs[s.Mesh][n]
		if f == nil {
			f = &measuredFigs{}
			figs[s.Mesh][n] = f
		}
		var cores, mem float64
		for _, sr := range cell.Resources {
			switch sr.Component.Role {
			case metrics.RoleApp, metrics.RoleLoad, metrics.RoleIngress:
				continue
			}
			cores += sr.MeanCPU()
			mem += sr.MeanMemory()
		}
		f.cores, f.mem = append(f.cores, cores), append(f.mem, mem)
		if cell.Merged != nil && cell.Merged.Latency != nil && cell.Merged.Latency.Count() > 0 {
			f.p50 = append(f.p50, float64(cell.Merged.Latency.Percentile(50))/float64(time.Millisecond))
		}
	}
	base := figs["baseline"]
	for _, mesh := range order {
		if mesh == "baseline" {
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(figs[mesh])) {
			f := figs[mesh][n]
			pr, err := predict.Predict(p, predict.Options{Graph: g, GraphName: g.Name, Meshes: []string{mesh},
				Scale: predict.Scale{Namespaces: n, Rate: c.rate, Connections: c.connections, Nodes: p.Nodes}})
			if err != nil {
				return fmt.Errorf("%s, %d tenants, %s: %w", g.Name, n, mesh, err)
			}
			m := pr.Meshes[0]
			row := func(figure string, pred predict.Interval, measured float64, prec int) {
				e := (pred.V - measured) / measured * 100
				fs := "%." + strconv.Itoa(prec) + "f"
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t"+fs+"\t["+fs+", "+fs+"]\t"+fs+"\t%+.0f\t\n", g.Name, n, mesh, figure, pred.V, pred.Lo, pred.Hi, measured, e)
			}
			row("cpu cores", m.Cores, median(f.cores), 3)
			row("mem MiB", m.Mem.Times(1.0/(1<<20)), median(f.mem)/(1<<20), 0)
			if b := base[n]; b != nil && len(b.p50) > 0 && len(f.p50) > 0 {
				row("added p50 ms", m.P50, median(f.p50)-median(b.p50), 3)
			}
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
