package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshbench/meshbench/internal/history"
	"github.com/meshbench/meshbench/internal/platform"
	platformlab "github.com/meshbench/meshbench/internal/platform/lab"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
	"github.com/meshbench/meshbench/internal/study"
)

type runFlags struct {
	file       string
	preset     string
	validate   bool
	plan       bool
	output     string
	out        string
	resume     string
	anyway     bool
	trust      bool
	scale      float64
	platform   study.PlatformOverride
	sharedHost bool
	// allowChartRules accepts the wide rules of the charts' roles they
	// name (kube.AllowChartRulesFlag).
	allowChartRules []string
	history         string

	controlPlane controlPlaneFlags
}

func newRunCmd(s Streams, g *globals) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Run a study: every mesh under every load, interleaved, into a results directory",
		Long: `Run a study file (or a built-in study with --study; default: quick) end to
end: bring the platform up, and for each cell deploy the workload, install
and verify the mesh, warm up, measure, and sample every component's CPU and
memory. Results go to a directory (--out; default results/<study>-<time>)
that 'meshbench report DIR' turns into a report at any time.

Cells are the cross product of the study's sweeps, each run once per mesh
and repetition. Meshes are interleaved within each round, in an order
shuffled with a recorded seed, so that machine drift does not pass for a
mesh difference. On the lab a built-in study keeps its topology, namespaces
and load model and is scaled to the machine: a short baseline measurement
finds the capacity first, or --scale gives the factor.

Before it creates anything, run makes the checks 'meshbench doctor' makes
and stops, one line per problem with its fix, when one fails; among them,
another lab's processes on the study's CPUs (--shared-host accepts them).

--validate checks a study file and --plan prints the cells, their order and
an estimated duration; neither runs anything.

A study's thresholds (docs/results.md) are judged when the run ends, one
line each after the results directory: exit 4 when one is not met, or
exit 1 when a cell failed as well. Ctrl-C stops cleanly, leaving
every finished cell on disk; --resume DIR continues from there, on the
same host, CPU, kernel, Envoy and Kubernetes context, or refuses
(--resume-anyway mixes them, each cell recording its own, and the report
shows the mix). A study resumed from its results directory cannot choose
what reaches outside it (the cluster, its context or kubeconfig, images,
charts, a Prometheus URL): give those with --platform, --context,
--kubeconfig and --image, or pass --trust-study for a directory you
trust. One run at a time writes a results directory: another
refuses, naming it. Nothing in a results directory is followed through a
symbolic link.

--platform, --kubeconfig, --context and --image replace the study file's
platform settings, so that one study file runs on the lab or on a
cluster; see docs/kubernetes.md.

On the lab each run makes its own lab, named mbr<pid in base 36>, and
removes it at the end, keeping every pod's log in the results' logs/pods
and each cell's load generator output in logs/cells/<cell>; should the
process be killed outright, its pods die with it (a parent-death signal)
and 'meshbench lab down' removes the rest (namespaces, cgroups, state).`,
		Example: `  meshbench run                          # the quick study on the lab
  meshbench run --study solo-tiered --plan
  meshbench run my-study.yaml --out results/mine
  meshbench run --validate my-study.yaml
  meshbench run kube-study.yaml --kubeconfig ~/.kube/perf --context perf-cluster
  meshbench run --study quick --platform kubernetes --image ghcr.io/you/meshbench:v0.1.0
  meshbench run --resume results/quick-20260101-120000`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.file = args[0]
			}
			return runStudy(cmd.Context(), s, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.preset, "study", "", "run a built-in study (see 'meshbench studies'); default "+study.DefaultPreset)
	fl.BoolVar(&f.validate, "validate", false, "check the study file and exit")
	fl.BoolVar(&f.plan, "plan", false, "print the cells, their order and an estimated duration, and exit")
	outputFlag(fl, &f.output, "plan output format: text or json", outText, outJSON)
	fl.StringVar(&f.out, "out", "", "results directory (default results/<study>-<time>)")
	fl.StringVar(&f.resume, "resume", "", "continue the interrupted run in this results directory")
	fl.BoolVar(&f.trust, "trust-study", false, "with --resume, honour what the results directory's study names outside it (a cluster, images, charts, a Prometheus URL, a kubeconfig): only for a directory you trust")
	fl.BoolVar(&f.anyway, "resume-anyway", false, "with --resume, continue on another host, CPU, kernel, Envoy or Kubernetes context than the run started on (each cell then records its own)")
	fl.Float64Var(&f.scale, "scale", 0, "scale open-loop rates and request counts by this factor instead of calibrating")
	fl.StringVar(&f.history, "history", "", "add the finished run to this history: a SQLite file or a postgres:// URL (see meshbench history)")
	addPlatformFlags(cmd, &f)
	addControlPlaneFlags(fl, &f.controlPlane)
	return cmd
}

// runStudy maps the flags onto the study package: validate, plan or run.
func runStudy(ctx context.Context, s Streams, g *globals, f runFlags) error {
	if f.preset == controlPlaneStudy || (f.preset == "" && f.file == "" && f.resume != "" && isControlPlaneResults(f.resume)) {
		if f.history != "" {
			return usageErrorf("--history keeps data-plane studies' figures; the control-plane study's are not kept there")
		}
		return runControlPlane(ctx, s, g, f)
	}
	if f.scale < 0 {
		return fmt.Errorf("--scale %g: want a factor above 0", f.scale)
	}
	if f.resume != "" && f.out != "" {
		return errors.New("--resume continues in its own directory; drop --out")
	}
	if f.anyway && f.resume == "" {
		return errors.New("--resume-anyway is for --resume DIR")
	}
	if f.trust && (f.resume == "" || f.file != "" || f.preset != "") {
		return errors.New("--trust-study is for --resume DIR without a study file: a study file or --study is trusted already")
	}
	st, src, name, err := loadStudy(f)
	if err != nil {
		return err
	}
	if f.validate || f.plan {
		plan, err := study.NewPlan(st, st.ScalingFor(f.scale))
		if err != nil {
			return err
		}
		switch {
		case f.validate:
			_, err = fmt.Fprintf(s.Out, "%s: valid: study %s, %d cells, estimated %s on the %s platform\n",
				name, st.Name, len(plan.Cells), plan.Estimate.Round(time.Second), st.Platform.Type)
		case f.output == "json":
			enc := json.NewEncoder(s.Out)
			enc.SetIndent("", "  ")
			err = enc.Encode(plan)
		default:
			err = plan.WriteText(s.Out)
		}
		return err
	}
	o := study.Options{
		Study: st, Source: src, Open: openPlatform, Dir: f.out, Resume: f.resume != "", ResumeAnyway: f.anyway,
		Scale: f.scale, SharedHost: f.sharedHost, Version: Version, Commit: buildCommit(), Progress: s.ErrOut, Logger: g.logger(s),
	}
	if g.quiet {
		o.Progress = io.Discard
	}
	if o.Resume {
		o.Dir = f.resume
	} else if o.Dir == "" {
		o.Dir = study.DefaultDir(st.Name, time.Now())
	}
	// Before anything exists: a missing prerequisite found now costs
	// nothing to fix, found in the third cell it costs a run.
	fs := preflight(ctx, st, o.Dir, f)
	if err := platform.Problems(fs); err != nil {
		return err
	}
	for _, w := range platform.Warnings(fs) {
		fmt.Fprintf(s.ErrOut, "warning: %s\n", w.Line())
	}
	// The history is opened before the run, so that a history that cannot
	// be written costs nothing.
	var hist *history.Store
	if f.history != "" {
		if hist, err = history.Open(ctx, f.history); err != nil {
			return err
		}
		defer hist.Close()
	}
	idx, err := study.Run(ctx, o)
	if err != nil {
		return err
	}
	if _, err = fmt.Fprintf(s.Out, "%s\n", o.Dir); err != nil {
		return err
	}
	if hist != nil {
		added, err := history.AddDirs(ctx, hist, []string{o.Dir}, nil)
		if err != nil {
			return fmt.Errorf("the run finished in %s, but adding it to the history failed (add it with meshbench history add %s --history %s): %w", o.Dir, o.Dir, hist, err)
		}
		fmt.Fprintf(s.ErrOut, "added run %s (%d figures) to the history %s\n", added[0].ID, added[0].Figures, hist)
	}
	// The results are kept and reportable, but a CI job must see that
	// the run did not measure everything it planned (exit 1), and that
	// its thresholds were not met (exit 4); failed cells win, for they
	// say the figures themselves are incomplete.
	thresholds := judgeRun(s.Out, o.Dir, st, g.logger(s))
	return runError(failedCells(idx, o.Dir), thresholds)
}

// runError is a finished run's error: its failed cells' (exit 1) over its
// thresholds' (exit 4), naming both when both failed.
func runError(cells, thresholds error) error {
	if cells != nil && thresholds != nil {
		return fmt.Errorf("%w\nand %s", cells, thresholds)
	}
	return cmp.Or(cells, thresholds)
}

// failedCells is an error naming each failed cell of idx and its reason,
// nil when none failed.
func failedCells(idx *results.Index, dir string) error {
	if idx == nil {
		return nil
	}
	var failed []string
	for _, c := range idx.Cells {
		if c.Status == results.StatusFailed {
			failed = append(failed, c.ID+": "+c.Reason)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d cells failed (results kept in %s; each cell's logs in %s/logs/cells):\n  %s",
		len(failed), len(idx.Cells), dir, dir, strings.Join(failed, "\n  "))
}

// loadStudy finds the study: a file, a built-in, or the study of the run
// to resume; name says which, for messages.
func loadStudy(f runFlags) (*study.Study, []byte, string, error) {
	switch {
	case f.file != "" && f.preset != "":
		return nil, nil, "", errors.New("give a study file or --study, not both")
	case f.file != "":
		if err := existing("study file", f.file); err != nil {
			return nil, nil, "", err
		}
		st, src, err := study.LoadFile(f.file, f.platform)
		return st, src, f.file, err
	case f.preset == "" && f.resume != "":
		if err := existing("--resume", f.resume); err != nil {
			return nil, nil, "", err
		}
		st, src, err := study.LoadRun(f.resume, f.platform, f.trust)
		return st, src, f.resume, err
	}
	name := f.preset
	if name == "" {
		name = study.DefaultPreset
	}
	st, src, err := study.Preset(name, f.platform)
	return st, src, name, err
}

// openPlatform returns the platform a study's platform section names.
func openPlatform(ctx context.Context, p study.Platform, log *slog.Logger, podLogDir confined.Dir) (platform.Platform, error) {
	if p.Type == study.PlatformKubernetes {
		return openKubernetes(p, log)
	}
	// A lab of its own, named after the process, so that a run never
	// touches a lab that `meshbench lab up` or another run made.
	name := labName(os.Getpid())
	log.Info("the run's lab", "name", name, "down", "meshbench lab down --name "+name)
	return platformlab.New(platformlab.Options{Name: name, Prefix: name, LogDir: podLogDir, Logger: log}), nil
}

// labName names a run's lab: "mbr" and the process ID in base 36, at most
// 8 characters as lab prefixes must be.
func labName(pid int) string { return "mbr" + strconv.FormatInt(int64(pid), 36) }
