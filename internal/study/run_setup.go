package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// runner holds one run's state: the results directory, the platform, and
// what is deployed and installed on it now.
type runner struct {
	o       Options
	s       *Study
	dir     string
	log     *slog.Logger
	logFile *os.File
	lock    *results.Lock
	// cellPlatform, in a run resumed with ResumeAnyway elsewhere than it
	// started, is what each cell measured now records.
	cellPlatform *infra.Info
	progress     io.Writer
	p            platform.Platform
	ix           *results.Index
	wroteIndex   bool
	started      time.Time
	done         map[string]bool // IDs of the cells already in the index

	group    int           // the workload group deployed, 0 for none
	groupErr map[int]error // groups whose deployment failed
	mesh     string        // the mesh installed, "" for none
	checks   []mesh.Check
	quiet    quietPolicy
	prog     *progress // the study's cells, for the progress lines
	dep      int       // the deployment running, from 1
	// deployed says a deployment has run on the platform: the next one
	// brings it up afresh. workApplied says the study's work calibration,
	// measured or recorded, is in s.
	deployed, workApplied bool
}

func newRunner(o Options) (*runner, error) {
	if o.Study == nil || o.Open == nil || o.Dir == "" {
		return nil, errors.New("study run: Study, Open and Dir are required")
	}
	r := &runner{o: o, s: o.Study, dir: o.Dir, progress: o.Progress, started: time.Now(),
		done: map[string]bool{}, groupErr: map[int]error{}, quiet: defaultQuiet}
	if r.progress == nil {
		r.progress = io.Discard
	}
	if o.Resume {
		if _, err := os.Stat(r.dir); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		// A run stopped before it wrote its index made nothing to keep: it
		// starts again.
		if !exists(r.dir, results.IndexFile) && emptyOrNew(r.dir) == nil {
			r.o.Resume = false
		}
	} else if err := emptyOrNew(r.dir); err != nil && !exists(r.dir, results.LockFile) {
		// Checked again under the lock; here first, so that no lock file
		// is left in a directory that is not meshbench's. A directory with
		// one may be another run's, which the lock names.
		return nil, err
	}
	command := o.Command
	if command == nil {
		command = os.Args
	}
	lock, err := results.Acquire(r.dir, command)
	if err != nil {
		return nil, err
	}
	r.lock = lock
	if r.o.Resume {
		err = r.openResults()
	} else {
		err = r.createResults()
	}
	if err == nil {
		r.logFile, err = results.OpenFile(r.dir, results.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY)
	}
	if err == nil {
		// Now rather than when the first cell is written: a link there is
		// refused before anything is measured.
		err = results.Mkdir(r.dir, results.CellsDir)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	file := slog.NewTextHandler(r.logFile, &slog.HandlerOptions{Level: slog.LevelDebug})
	if o.Logger != nil {
		r.log = slog.New(slog.NewMultiHandler(o.Logger.Handler(), file))
	} else {
		r.log = slog.New(file)
	}
	return r, nil
}

// emptyOrNew refuses a results directory that holds anything but what a
// run stopped before its index leaves: the lock file, and the temporary
// file of an unfinished write.
func emptyOrNew(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("results: %w", err)
	}
	for _, e := range entries {
		if e.Name() != results.LockFile && !strings.HasPrefix(e.Name(), confined.TempPrefix(results.IndexFile)) {
			return fmt.Errorf("results directory %s already exists and is not empty: choose another --out, or continue it with --resume", dir)
		}
	}
	return nil
}

// createResults makes a new results directory: the index first, so that
// a run killed at any later point leaves a directory that can be resumed,
// then the graph and study files, which resuming writes when they are
// missing.
func (r *runner) createResults() error {
	if err := emptyOrNew(r.dir); err != nil {
		return err
	}
	r.ix = &results.Index{
		Schema: results.SchemaVersion, Study: r.s.Name, StudyHash: r.s.SHA256,
		Start: time.Now().UTC(), Seed: r.s.Order.Seed, Cells: []results.Summary{},
		Provenance: results.Provenance{
			MeshbenchVersion: r.o.Version, GoVersion: runtime.Version(),
			Cluster:   infra.ClusterSpec{Nodes: r.s.Platform.Nodes},
			Published: r.s.Published,
		},
	}
	if err := r.writeIndex(); err != nil {
		return err
	}
	return r.writeStudyFiles()
}

// writeStudyFiles writes the graph file then the study file, those
// missing only when resuming: a directory with a study file has its
// graph file too.
func (r *runner) writeStudyFiles() error {
	if !r.o.Resume || !exists(r.dir, results.GraphFile) {
		g, err := r.s.Graph.Marshal()
		if err != nil {
			return err
		}
		if err := results.WriteFile(r.dir, results.GraphFile, g); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	if !r.o.Resume || !exists(r.dir, results.StudyFile) {
		if err := results.WriteFile(r.dir, results.StudyFile, r.o.Source); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	return nil
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// openResults reads an interrupted run's index and checks that it was
// made from the same study file.
func (r *runner) openResults() error {
	ix, err := results.ReadIndex(r.dir)
	if err != nil {
		return err
	}
	// A cell whose file is missing or not what the run wrote is measured
	// again: resuming is the way to repair damaged results, even of a
	// complete run.
	if damaged := results.CheckCells(r.dir, ix); len(damaged) > 0 {
		bad := map[string]bool{}
		for _, d := range damaged {
			r.printf("re-running cell %s: %s\n", d.ID, d.Error())
			bad[d.ID] = true
		}
		ix.Cells = slices.DeleteFunc(ix.Cells, func(s results.Summary) bool { return bad[s.ID] })
		ix.Complete = false
	}
	// Cells that stayed noisy are measured again, as the run's noise
	// guard would: the host may be quieter now.
	if n := noisyCells(ix); ix.Complete && n > 0 && *r.s.Noise.Retries > 0 {
		r.printf("re-measuring %d cells that stayed noisy\n", n)
		ix.Complete = false
	}
	switch {
	case ix.Complete:
		return fmt.Errorf("resume %s: %w", r.dir, ErrComplete)
	case ix.StudyHash != r.s.SHA256:
		return fmt.Errorf("resume %s: the study file has changed since the run started (sha256 %.12s, the results have %.12s); resume with the original study.yaml", r.dir, r.s.SHA256, ix.StudyHash)
	case ix.Seed != r.s.Order.Seed:
		return fmt.Errorf("resume %s: the results were planned with seed %d, the study has %d", r.dir, ix.Seed, r.s.Order.Seed)
	}
	// A run killed before it wrote them: the study's hash matched.
	if err := r.writeStudyFiles(); err != nil {
		return err
	}
	if err := r.sameGraph(); err != nil {
		return err
	}
	for _, c := range ix.Cells {
		r.done[c.ID] = true
	}
	ix.Resumed = append(ix.Resumed, time.Now().UTC())
	// An older schema only lacks fields this run adds (the cell hashes).
	ix.Schema = results.SchemaVersion
	r.ix = ix
	return nil
}

// sameGraph refuses to resume with a workload graph other than the one
// the run started with: a study file naming a graph file that has changed
// since has the same hash.
func (r *runner) sameGraph() error {
	was, err := confined.ReadFile(r.dir, results.GraphFile, results.MaxStudyBytes)
	if err != nil {
		return fmt.Errorf("resume %s: %w", r.dir, err)
	}
	now, err := r.s.Graph.Marshal()
	if err != nil {
		return err
	}
	if !bytes.Equal(was, now) {
		return fmt.Errorf("resume %s: the workload graph %q differs from the one the run started with (%s); resume without a study file to use the recorded one", r.dir, r.s.Workload.Graph, results.GraphFile)
	}
	return nil
}

// setUp opens the platform, records its facts and brings the cluster up.
func (r *runner) setUp(ctx context.Context) error {
	podLogs := confined.Dir{Root: r.dir, Name: results.PodLogDir}
	if err := podLogs.Mkdir(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	p, err := r.o.Open(ctx, r.s.Platform, r.log, podLogs)
	if err != nil {
		return fmt.Errorf("platform %s: %w", r.s.Platform.Type, err)
	}
	r.p = p
	info, err := p.Info(ctx)
	if err != nil {
		return fmt.Errorf("platform %s: %w", r.s.Platform.Type, err)
	}
	measured := len(r.ix.Cells) > 0 || len(r.ix.Capacity) > 0
	switch {
	case r.o.Resume && r.ix.Provenance.Platform.Name == "" && measured:
		// A run records its platform before its first cell: an index
		// with cells and no platform was edited, and whether this is the
		// experiment the run started cannot be checked.
		if !r.o.ResumeAnyway {
			return fmt.Errorf("resume %s: its index records no platform for the cells it holds (a run records it before its first cell), so whether this is the experiment the run started cannot be checked; resume with --resume-anyway to mix them (each cell measured now records its platform, and the report shows the mix)", r.dir)
		}
		r.log.Warn("resuming a run whose index records no platform: the cells measured now record theirs")
		r.cellPlatform = &info
	case r.o.Resume && r.ix.Provenance.Platform.Name != "":
		if diff := platformDiff(r.ix.Provenance.Platform, info); diff != "" {
			if !r.o.ResumeAnyway {
				return fmt.Errorf("resume %s: this is not the experiment the run started: %s; resume where it started, or with --resume-anyway to mix them (each cell then records what it was measured on, and the report shows the mix)", r.dir, diff)
			}
			r.log.Warn("resuming on another host, Envoy, kernel or context: the cells measured now record theirs", "differences", diff)
			r.printf("warning: resuming anyway: %s; the cells measured now record it, and the report shows the mix\n", diff)
			r.cellPlatform = &info
		}
	default:
		// A run killed before it recorded the platform records it now.
		r.ix.Provenance.Platform = info
	}
	if err := r.writeIndex(); err != nil {
		return err
	}
	r.log.Debug("bringing the platform up", "platform", info.Name, "nodes", len(r.s.Platform.Nodes))
	if err := p.Up(ctx, infra.ClusterSpec{Nodes: r.s.Platform.Nodes}); err != nil {
		return fmt.Errorf("platform %s: up: %w", r.s.Platform.Type, err)
	}
	return nil
}

// platformDiff says how now differs from was in what makes the experiment
// (host, CPU, kernel, Envoy, Kubernetes context); "" when it does not. A
// fact either side did not record is not compared.
func platformDiff(was, now infra.Info) string {
	var diffs []string
	for _, f := range []struct{ name, was, now string }{
		{"host", was.Host, now.Host}, {"CPU", was.CPUModel, now.CPUModel}, {"kernel", was.Kernel, now.Kernel},
		{"Envoy", was.EnvoyVersion, now.EnvoyVersion}, {"context", was.Context, now.Context},
		{"platform", was.Name, now.Name},
	} {
		if f.was != "" && f.now != "" && f.was != f.now {
			diffs = append(diffs, fmt.Sprintf("%s %s, was %s", f.name, f.now, f.was))
		}
	}
	return strings.Join(diffs, ", ")
}

func (r *runner) writeIndex() error {
	if err := results.WriteJSON(r.dir, results.IndexFile, r.ix); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	r.wroteIndex = true
	return nil
}

func (r *runner) close() {
	if r.logFile != nil {
		r.logFile.Close()
	}
	r.lock.Release()
}

// toRemeasure says whether the noise guard measures a cell again: it is
// noisy and did not fail.
func toRemeasure(s results.Summary) bool { return s.Noisy && s.Status != results.StatusFailed }

// noisyCells counts the cells the noise guard would measure again.
func noisyCells(ix *results.Index) int {
	n := 0
	for _, s := range ix.Cells {
		if toRemeasure(s) {
			n++
		}
	}
	return n
}
