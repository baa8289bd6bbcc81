// Command lab measures the lab's scale and overhead and prints the
// figures: bring-up (Up and Deploy until every pod is ready) and teardown
// of N namespaces of the tiered graph (4 app pods each) on 4 nodes, and
// the latency a request pays for going pod -> Service -> pod across two
// nodes, against the same server and client on plain loopback. It needs
// root and a built meshbench (make build).
//
//	go run ./bench/lab -bin bin/meshbench
//	go run ./bench/lab -bin bin/meshbench -namespaces 10 -requests 5000
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
	platlab "github.com/meshbench/meshbench/internal/platform/lab"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/topology"
)

func main() {
	bin := flag.String("bin", os.Getenv("MESHBENCH_BIN"), "meshbench binary (default $MESHBENCH_BIN)")
	namespaces := flag.Int("namespaces", 50, "namespaces of the tiered graph for the scale run (0 skips it)")
	requests := flag.Int("requests", 20000, "requests per latency run")
	rounds := flag.Int("rounds", 3, "interleaved rounds of each latency case")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "bench/lab: give -bin bin/meshbench (make build)")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*bin)
	if err == nil {
		*bin = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if *namespaces > 0 {
		if err := scale(ctx, *bin, *namespaces); err != nil {
			fmt.Fprintln(os.Stderr, "bench/lab: scale:", err)
			os.Exit(1)
		}
	}
	if err := overhead(ctx, *bin, *requests, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/lab: overhead:", err)
		os.Exit(1)
	}
}

// prefix is this run's lab prefix, unique enough among parallel runs.
func prefix() string { return "mbb" + strconv.Itoa(os.Getpid()%100000) }

// scale times bringing up and tearing down n namespaces on 4 app nodes.
func scale(ctx context.Context, bin string, n int) error {
	g, err := topology.Load("tiered")
	if err != nil {
		return err
	}
	p := platlab.New(platlab.Options{Name: prefix(), Prefix: prefix(), Bin: bin})
	spec := infra.ClusterSpec{}
	for i := 1; i <= 4; i++ {
		spec.Nodes = append(spec.Nodes, infra.NodeSpec{Name: "app-" + strconv.Itoa(i), Role: infra.NodeApp})
	}
	start := time.Now()
	err = p.Up(ctx, spec)
	if err == nil {
		err = p.Deploy(ctx, platform.Workload{Graph: g, Namespaces: n})
	}
	up := time.Since(start)
	start = time.Now()
	derr := p.Down(context.Background())
	down := time.Since(start)
	if err != nil {
		return err
	}
	if derr != nil {
		return derr
	}
	pods := n * len(g.Deployments())
	fmt.Printf("scale: %d namespaces x %d app pods = %d pods (+%d load pods) on 4 nodes, %d CPUs\n", n, len(g.Deployments()), pods, n, runtime.NumCPU())
	fmt.Printf("  bring-up (until all ready): %6.2f s   (target < 30 s)\n", up.Seconds())
	fmt.Printf("  teardown:                   %6.2f s   (target < 10 s)\n", down.Seconds())
	return nil
}

// overhead measures one connection's request latency against a leaf of
// the tiered graph: on loopback in the root namespace, and from a pod on
// one node through a Service to a pod on another.
func overhead(ctx context.Context, bin string, requests, rounds int) error {
	l, err := cluster.Up(ctx, cluster.Config{Name: prefix(), Prefix: prefix(),
		Nodes: []cluster.NodeConfig{{Name: "app", Role: "app"}, {Name: "load", Role: "load"}}})
	if err != nil {
		return err
	}
	defer l.Down(context.Background())
	const port = 8080
	server := []string{bin, "app", "--graph", "tiered", "--service", "tier-3-app-a"}
	err = l.CreatePods(ctx, []cluster.PodSpec{
		{Namespace: "ns-1", Name: "server", Node: "app", Labels: map[string]string{"app": "server"},
			Containers: []cluster.ContainerSpec{{Name: "app", Command: append(server, "--listen", ":"+strconv.Itoa(port)),
				Readiness: &cluster.Probe{Port: port, Path: "/readyz"}}}},
		{Namespace: "ns-1", Name: "client", Node: "load"},
	})
	if err != nil {
		return err
	}
	svc, err := l.ApplyService(ctx, cluster.ServiceSpec{Namespace: "ns-1", Name: "server", Selector: map[string]string{"app": "server"}, Port: 80, TargetPort: port})
	if err != nil {
		return err
	}
	if err := l.WaitReady(ctx); err != nil {
		return err
	}
	loopAddr, stop, err := startLoopback(ctx, bin)
	if err != nil {
		return err
	}
	defer stop()
	args := func(url string) []string {
		return []string{bin, "load", "-q", "--output", "json", "-c", "1", "-n", strconv.Itoa(requests), "--warmup", "1s", url}
	}
	var loopback, viaLab []time.Duration
	for r := 0; r < rounds; r++ {
		res, err := runLocal(ctx, args("http://"+loopAddr+"/"))
		if err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
		loopback = append(loopback, res.Latency.Percentile(50))
		res, err = runInPod(ctx, l, r, args("http://"+svc.Addr().String()+"/"))
		if err != nil {
			return fmt.Errorf("lab: %w", err)
		}
		viaLab = append(viaLab, res.Latency.Percentile(50))
	}
	a, b := median(loopback), median(viaLab)
	fmt.Printf("overhead: p50 latency of one keep-alive connection, %d requests x %d rounds (medians)\n", requests, rounds)
	fmt.Printf("  loopback (root namespace):              %8s\n", a)
	fmt.Printf("  pod -> Service -> pod across two nodes: %8s\n", b)
	fmt.Printf("  lab overhead per request:               %8s  (x%.2f)\n", b-a, float64(b)/float64(a))
	return nil
}

// startLoopback runs the same leaf on 127.0.0.1 and waits for it.
func startLoopback(ctx context.Context, bin string) (string, func(), error) {
	port := 20000 + os.Getpid()%20000
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, bin, "app", "--graph", "tiered", "--service", "tier-3-app-a", "--listen", addr)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for i := 0; i < 100; i++ {
		if exec.CommandContext(ctx, "curl", "-sf", "-o", "/dev/null", "http://"+addr+"/readyz").Run() == nil {
			return addr, stop, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("loopback server on %s did not start", addr)
}

func runLocal(ctx context.Context, argv []string) (*load.Result, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return load.ReadResult(&out)
}

func runInPod(ctx context.Context, l *cluster.Lab, round int, argv []string) (*load.Result, error) {
	var out bytes.Buffer
	name := "load-" + strconv.Itoa(round)
	c := cluster.ContainerSpec{Name: name, Command: argv, Restart: cluster.RestartNever, Stdout: &out}
	if err := l.AddContainer(ctx, "ns-1", "client", c); err != nil {
		return nil, err
	}
	defer l.RemoveContainer(context.Background(), "ns-1", "client", name)
	if code, err := l.WaitContainer(ctx, "ns-1", "client", name); err != nil || code != 0 {
		return nil, fmt.Errorf("load exited %d: %v", code, err)
	}
	return load.ReadResult(&out)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
