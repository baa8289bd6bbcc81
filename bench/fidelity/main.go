// Command fidelity runs the built-in studies' reproduction cells on the
// lab and prints, per study, every published figure beside the one
// measured and their ratio, so that a change can be checked against the
// studies it claims to reproduce. The reproduction cells are the cells
// whose sweep values some published figure names (for livewyer-bookinfo:
// pod -> Service with one productpage replica, and the replica sweep's
// ends), at -repetitions each; -only narrows them further. With -results
// it reads finished runs instead of running. It needs root, Envoy
// (scripts/setup.sh) and a built meshbench (make build).
//
//	go run ./bench/fidelity -bin bin/meshbench
//	go run ./bench/fidelity -bin bin/meshbench -studies livewyer-bookinfo -only connections=32 -repetitions 2
//	go run ./bench/fidelity -results results/solo-tiered-20261124-203400
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/study"
)

func main() {
	bin := flag.String("bin", os.Getenv("MESHBENCH_BIN"), "meshbench binary (default $MESHBENCH_BIN)")
	studies := flag.String("studies", "solo-tiered,livewyer-bookinfo", "built-in studies to run, comma-separated")
	reps := flag.Int("repetitions", 2, "repetitions of each reproduction cell")
	only := flag.String("only", "", "keep only sweep values param=value (comma-separated), e.g. connections=32")
	out := flag.String("out", "", "directory for the runs' results (default a temporary directory)")
	resultsDirs := flag.String("results", "", "finished results directories to read instead of running, comma-separated")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *bin, *studies, *reps, *only, *out, *resultsDirs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/fidelity:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, bin, studies string, reps int, only, out, resultsDirs string) error {
	var dirs []string
	if resultsDirs != "" {
		dirs = strings.Split(resultsDirs, ",")
	} else {
		if bin == "" {
			return fmt.Errorf("give -bin bin/meshbench (make build), or -results DIR")
		}
		if out == "" {
			tmp, err := os.MkdirTemp("", "meshbench-fidelity-")
			if err != nil {
				return err
			}
			out = tmp
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, name := range strings.Split(studies, ",") {
			dir, err := runStudy(ctx, bin, strings.TrimSpace(name), reps, only, out)
			if err != nil {
				return err
			}
			dirs = append(dirs, dir)
		}
	}
	for _, dir := range dirs {
		if err := print(w, dir); err != nil {
			return err
		}
	}
	return nil
}

// runStudy writes the preset's reproduction cells as a study file and
// runs it, returning its results directory.
func runStudy(ctx context.Context, bin, name string, reps int, only, out string) (string, error) {
	s, src, err := study.Preset(name, study.PlatformOverride{})
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	doc["repetitions"] = reps
	doc["name"] = name + "-fidelity"
	keep := map[string][]string{}
	for _, kv := range strings.Split(only, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			keep[k] = append(keep[k], v)
		}
	}
	sweeps, _ := doc["sweeps"].([]any)
	for _, sw := range sweeps {
		m := sw.(map[string]any)
		m["values"] = reproductionValues(m, s, keep)
	}
	file := filepath.Join(out, name+"-fidelity.yaml")
	data, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", err
	}
	dir := filepath.Join(out, name)
	cmd := exec.CommandContext(ctx, bin, "run", file, "--out", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "bench/fidelity: %s\n", strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return dir, nil
}

// reproductionValues keeps a sweep's values that some published figure
// names (all of them when none names the sweep's parameters) and that
// -only allows.
func reproductionValues(sw map[string]any, s *study.Study, keep map[string][]string) []any {
	names := []string{}
	if p, ok := sw["param"].(string); ok && p != "" {
		names = append(names, p)
	}
	for _, p := range asList(sw["params"]) {
		names = append(names, fmt.Sprint(p))
	}
	var out []any
	for _, v := range asList(sw["values"]) {
		row := asList(v)
		if len(names) == 1 {
			row = []any{v}
		}
		vals := map[string]string{}
		for i, n := range names {
			if i < len(row) {
				vals[n] = text(row[i])
			}
		}
		if published(vals, s) && allowed(vals, keep) {
			out = append(out, v)
		}
	}
	return out
}

func published(vals map[string]string, s *study.Study) bool {
	named := false
	for _, p := range s.Published {
		match := true
		for n, v := range vals {
			pv, ok := p.Params[n]
			if ok {
				named = true
			}
			if !ok || pv != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return !named
}

func allowed(vals map[string]string, keep map[string][]string) bool {
	for n, v := range vals {
		if ks, ok := keep[n]; ok && !contains(ks, v) {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// text is a sweep value as results record it.
func text(v any) string {
	if f, ok := v.(float64); ok {
		b, _ := json.Marshal(f)
		return string(b)
	}
	return fmt.Sprint(v)
}

// print writes one run's published figures beside its own.
func print(w io.Writer, dir string) error {
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s (%s)\n", d.Index.Study, dir)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tMESH\tCONFIGURATION\tPUBLISHED\tMEASURED\tRATIO\tSOURCE")
	for _, f := range d.Fidelities() {
		p := f.Published
		measured, ratio := "-", "-"
		if f.OK {
			measured = fmt.Sprintf("%.3g", f.Measured)
			if r := f.Ratio(); r != 0 {
				ratio = fmt.Sprintf("%.2f", r)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3g %s\t%s\t%s\t%s\n", p.Metric, p.Mesh, analysis.ParamsText(f.Config.Params), p.Value, f.Unit(), measured, ratio, p.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range d.Reproductions(d.Fidelities()) {
		verdict := "reproduces"
		switch {
		case !r.Reproduces():
			verdict = "does NOT reproduce"
		case len(r.Swaps) > 0:
			verdict = "reproduces within the run's precision (swapped meshes cannot be told apart)"
		}
		fmt.Fprintf(w, "ordering of %s %s: published %s, measured %s: %s\n", r.Metric, analysis.ParamsText(r.Params),
			strings.Join(r.Published, " < "), strings.Join(r.Measured, " < "), verdict)
	}
	return nil
}
