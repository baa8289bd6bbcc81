// Command mesh measures what each mesh profile adds on the lab, in one
// run: the tiered graph in one namespace on a 2-node lab (app node pinned
// to CPU 1, load node to CPU 0, unless -pin=false), the same open-loop load at one fixed rate
// against the entry Service under every profile, and for each the latency
// (p50, p99, and what the profile adds over baseline) and the mean CPU and
// working set of every component. Profiles run in interleaved rounds so
// that drift on the shared machine spreads evenly; figures are medians
// over rounds. It needs root, Envoy (scripts/setup.sh) and a built
// meshbench (make build).
//
//	go run ./bench/mesh -bin bin/meshbench
//	go run ./bench/mesh -bin bin/meshbench -rate 100 -duration 30s -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	platlab "github.com/meshbench/meshbench/internal/platform/lab"
	"github.com/meshbench/meshbench/internal/topology"
)

func main() {
	bin := flag.String("bin", os.Getenv("MESHBENCH_BIN"), "meshbench binary (default $MESHBENCH_BIN)")
	rate := flag.Float64("rate", 40, "requests per second to the entry Service (open loop)")
	duration := flag.Duration("duration", 20*time.Second, "measured phase per profile and round")
	warmup := flag.Duration("warmup", 5*time.Second, "warm-up before each measured phase")
	conns := flag.Int("connections", 8, "load generator connections (keep-alive)")
	rounds := flag.Int("rounds", 1, "interleaved rounds over all profiles")
	pin := flag.Bool("pin", true, "pin the app node to CPU 1 and the load node to CPU 0")
	only := flag.String("profiles", strings.Join(platform.ProfileNames(platform.Lab), ","), "profiles to measure, comma-separated (baseline is always added)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "bench/mesh: give -bin bin/meshbench (make build)")
		os.Exit(2)
	}
	if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}
	profiles := []string{platform.ProfileBaseline}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p != "" && p != platform.ProfileBaseline {
			profiles = append(profiles, p)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := load.Options{Method: "GET", Timeout: 5 * time.Second, Rate: *rate, Connections: *conns, Duration: *duration, Warmup: *warmup}
	if err := run(ctx, *bin, profiles, o, *rounds, *pin); err != nil {
		fmt.Fprintln(os.Stderr, "bench/mesh:", err)
		os.Exit(1)
	}
}

// cell is one profile's measurements over the rounds.
type cell struct {
	p50, p99 []time.Duration
	errors   int64
	requests int64
	// per role, one value per round: components, their summed mean CPU
	// (cores) and summed mean working set (bytes)
	n        map[metrics.Role][]float64
	cpu, mem map[metrics.Role][]float64
	checks   []platform.Check
}

func run(ctx context.Context, bin string, profiles []string, o load.Options, rounds int, pin bool) error {
	g, err := topology.Load("tiered")
	if err != nil {
		return err
	}
	name := "mbk" + strconv.Itoa(os.Getpid()%100000)
	p := platlab.New(platlab.Options{Name: name, Prefix: name, Bin: bin})
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Down(dctx); err != nil {
			fmt.Fprintln(os.Stderr, "bench/mesh: down:", err)
		}
	}()
	spec := platform.ClusterSpec{Nodes: []platform.NodeSpec{
		{Name: "app", Role: platform.NodeApp},
		{Name: "load", Role: platform.NodeLoad},
	}}
	if pin {
		spec.Nodes[0].CPUs, spec.Nodes[1].CPUs = "1", "0"
	}
	if err := p.Up(ctx, spec); err != nil {
		return err
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: 1}); err != nil {
		return err
	}
	cells := map[string]*cell{}
	for _, prof := range profiles {
		cells[prof] = &cell{n: map[metrics.Role][]float64{}, cpu: map[metrics.Role][]float64{}, mem: map[metrics.Role][]float64{}}
	}
	for r := 0; r < rounds; r++ {
		for _, prof := range profiles {
			fmt.Fprintf(os.Stderr, "round %d/%d: %s\n", r+1, rounds, prof)
			if err := measure(ctx, p, prof, o, cells[prof]); err != nil {
				return fmt.Errorf("%s: %w", prof, err)
			}
		}
	}
	report(profiles, cells, o, rounds)
	return nil
}

func measure(ctx context.Context, p platform.Platform, prof string, o load.Options, c *cell) error {
	checks, err := p.InstallMesh(ctx, platform.MeshSpec{Profile: prof})
	c.checks = checks
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.RemoveMesh(rctx); err != nil {
			fmt.Fprintln(os.Stderr, "bench/mesh: remove:", err)
		}
	}()
	m, err := p.Measure(ctx, platform.LoadSpec{Options: o, Path: platform.PathService})
	if err != nil {
		return err
	}
	res := m.Generators[0]
	c.p50 = append(c.p50, res.Latency.Quantile(50))
	c.p99 = append(c.p99, res.Latency.Quantile(99))
	c.errors += res.Errors
	c.requests += res.Requests
	n, cpu, mem := map[metrics.Role]float64{}, map[metrics.Role]float64{}, map[metrics.Role]float64{}
	for _, s := range m.Resources {
		r := s.Component.Role
		n[r]++
		cpu[r] += s.MeanCPU()
		mem[r] += s.MeanMemory()
	}
	for r := range n {
		c.n[r] = append(c.n[r], n[r])
		c.cpu[r] = append(c.cpu[r], cpu[r])
		c.mem[r] = append(c.mem[r], mem[r])
	}
	return nil
}

func report(profiles []string, cells map[string]*cell, o load.Options, rounds int) {
	fmt.Printf("mesh overhead on the lab: tiered graph (5 server hits per request), 1 namespace, 2 nodes\n")
	fmt.Printf("load: open loop %.0f req/s, %d connections, %s measured after %s warm-up, %d round(s); medians over rounds\n\n",
		o.Rate, o.Connections, o.Duration, o.Warmup, rounds)
	base := cells[platform.ProfileBaseline]
	bp50, bp99 := median(base.p50), median(base.p99)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "profile\tp50\tp99\tadded p50\tadded p99\tp50 x\terrors\t")
	for _, prof := range profiles {
		c := cells[prof]
		p50, p99 := median(c.p50), median(c.p99)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%.2f\t%d/%d\t\n", prof, ms(p50), ms(p99), ms(p50-bp50), ms(p99-bp99),
			float64(p50)/float64(bp50), c.errors, c.requests)
	}
	w.Flush()
	fmt.Println("\nCPU (mean cores) and memory (mean working set) by role, summed over the role's n components (app = the 4 app pods)")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	roles := []metrics.Role{metrics.RoleApp, metrics.RoleSidecar, metrics.RoleNodeProxy, metrics.RoleWaypoint, metrics.RoleIngress, metrics.RoleLoad}
	fmt.Fprint(w, "profile\t")
	for _, r := range roles {
		fmt.Fprintf(w, "%s n\t%s CPU\t%s MiB\t", r, r, r)
	}
	fmt.Fprintln(w, "data plane CPU\tdata plane MiB\t")
	for _, prof := range profiles {
		c := cells[prof]
		fmt.Fprintf(w, "%s\t", prof)
		var dpCPU, dpMem float64
		for _, r := range roles {
			n, cpu, mem := medianF(c.n[r]), medianF(c.cpu[r]), medianF(c.mem[r])
			if r.DataPlane() {
				dpCPU += cpu
				dpMem += mem
			}
			if n == 0 {
				fmt.Fprint(w, "-\t-\t-\t")
				continue
			}
			fmt.Fprintf(w, "%.0f\t%.3f\t%.0f\t", n, cpu, mem/(1<<20))
		}
		fmt.Fprintf(w, "%.3f\t%.0f\t\n", dpCPU, dpMem/(1<<20))
	}
	w.Flush()
	fmt.Println("\nverification (last round):")
	for _, prof := range profiles {
		var failed []string
		for _, ch := range cells[prof].checks {
			if !ch.Pass {
				failed = append(failed, ch.Name)
			}
		}
		status := fmt.Sprintf("%d checks passed", len(cells[prof].checks))
		if len(failed) > 0 {
			status = "FAILED: " + strings.Join(failed, ", ")
		}
		fmt.Printf("  %-20s %s\n", prof, status)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func medianF(fs []float64) float64 {
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
