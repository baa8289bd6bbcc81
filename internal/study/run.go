package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// cleanupTimeout bounds tearing the platform down after a run, interrupted
// or not.
const cleanupTimeout = 2 * time.Minute

// Options configure a run.
type Options struct {
	Study *Study
	// Source is the study file as written; it is copied into the results
	// and its hash recorded.
	Source []byte
	// Open returns the platform the study's platform section describes;
	// its logs should go to log, which also writes the results' run log,
	// and the logs of its pods, kept when it goes down, to podLogDir in
	// the results.
	Open func(ctx context.Context, p Platform, log *slog.Logger, podLogDir confined.Dir) (platform.Platform, error)
	// Dir is the results directory: new, or with Resume the directory of an
	// interrupted run to continue.
	Dir    string
	Resume bool
	// ResumeAnyway resumes on another host, CPU, kernel, Envoy or
	// Kubernetes context than the run started on, which is refused
	// otherwise; the cells measured then record their own platform.
	ResumeAnyway bool
	// Scale is a fixed scale factor for open-loop rates and request
	// counts; 0 keeps the study's own scaling (see Study.ScalingFor).
	Scale float64
	// SharedHost measures on a shared host as it is: no waiting for a
	// contended host to quiet before a noisy cell runs again.
	SharedHost bool
	Version    string
	// Command names the run in the results directory's lock, for another
	// run that finds it held; nil is os.Args.
	Command  []string
	Progress io.Writer    // status lines; nil discards
	Logger   *slog.Logger // nil discards
}

// ErrComplete says that a run to resume has nothing left to do.
var ErrComplete = errors.New("the run is already complete")

// Run runs a study end to end and returns its index. Every finished cell
// is written as it finishes, so that an interrupted run (ctx cancelled)
// leaves a valid partial result that Run with Resume continues. A cell
// whose deployment, mesh installation or measurement fails is recorded as
// failed and the run goes on; only the platform's set-up failing, or the
// context ending, stops it.
func Run(ctx context.Context, o Options) (*results.Index, error) {
	if o.Study != nil && o.Study.Search != nil && o.Resume {
		return nil, ErrSearchResume
	}
	r, err := newRunner(o)
	if err != nil {
		return nil, err
	}
	defer r.close()
	err = r.setUp(ctx)
	if r.p != nil {
		defer r.tearDown()
	}
	if err != nil {
		return r.ix, r.stopped(err)
	}
	if r.s.HasCells() {
		if err := r.runRounds(ctx); err != nil {
			return r.ix, r.stopped(err)
		}
	}
	if r.s.Search != nil {
		if err := r.searchCapacities(ctx); err != nil {
			return r.ix, err
		}
	}
	r.ix.Complete = true
	r.ix.End = time.Now().UTC()
	if err := r.writeIndex(); err != nil {
		return r.ix, err
	}
	switch {
	case !r.s.HasCells():
		r.printf("done: capacity of %d meshes in %s; results in %s\n", len(r.ix.Capacity), round(time.Since(r.started)), r.dir)
	case r.s.Search != nil:
		r.printf("done: %d cells and the capacity of %d meshes in %s; results in %s\n", len(r.ix.Cells), len(r.ix.Capacity), round(time.Since(r.started)), r.dir)
	default:
		r.printf("done: %d cells in %s; results in %s\n", len(r.ix.Cells), round(time.Since(r.started)), r.dir)
	}
	return r.ix, nil
}

// stopped reports how to continue a run that stopped early.
func (r *runner) stopped(err error) error {
	if r.ix != nil && r.wroteIndex {
		r.printf("stopped after %d of %d cells; the results so far are in %s\ncontinue with: meshbench run --resume %s\n",
			len(r.ix.Cells), r.ix.Planned, r.dir, r.dir)
	}
	return err
}

func (r *runner) printf(format string, args ...any) {
	fmt.Fprintf(r.progress, format, args...)
}

func round(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// tearDown removes everything the platform made, with a fresh context so
// that it runs after an interrupt too.
func (r *runner) tearDown() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := r.p.Down(ctx); err != nil {
		r.log.Error("tear down the platform", "err", err)
		r.printf("warning: tearing the platform down failed: %v\n", err)
	}
}
