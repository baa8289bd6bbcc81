package history

import (
	"fmt"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
)

// PrimaryMetrics are the metrics the gate judges: the regression gate's
// own (p50, p99, data-plane CPU per request), and the data plane's CPU
// per app CPU, which divides out the host's speed: on a shared VM the
// same work costs up to twice the CPU time minutes apart, which leaves a
// series of CPU per request too noisy to gate (envoy-releases' sidecar:
// 14% noise against 5%).
var PrimaryMetrics = func() []string {
	var out []string
	for _, m := range analysis.RegressionMetrics {
		out = append(out, string(m))
	}
	return append(out, string(analysis.CPUPerAppCPU))
}()

// Verdict is what the gate found: the regressions the newest runs
// introduced in stable series, and every primary series it read.
type Verdict struct {
	// New are the runs counted as new, newest last.
	New []*Run
	// Regressions are the change points the new runs introduced that made
	// a primary metric worse by at least analysis.RegressionMinPct, in
	// stable series; Unstable are those in unstable series, which do not
	// fail the gate.
	Regressions, Unstable []Finding
	// Series are the primary metrics' series, analysed with every run.
	Series []*Analysis
}

// Finding is one change point of one series.
type Finding struct {
	*Analysis
	Change ChangePoint
}

// ErrRegression is returned, wrapped, when the gate finds a regression.
var ErrRegression = analysis.ErrRegression

// Check reads the primary metrics' series of runs (as Load returns them;
// other metrics' figures are ignored)
// with and without the newest runs added, the last n by when they were
// added, and returns the change points that the newest runs introduced:
// those the series with them has and the series without them lacks (one
// point either way still counts as the same change). A change found only
// once the newest runs confirm it is introduced by them too: a change
// point needs MinSegment points after it, so a regression in the newest
// run alone shows when the run after it confirms it.
func Check(runs []*Run, n int) *Verdict {
	byAdded := slices.Clone(runs)
	slices.SortStableFunc(byAdded, func(a, b *Run) int { return a.Added.Compare(b.Added) })
	n = min(max(n, 0), len(byAdded))
	v := &Verdict{New: byAdded[len(byAdded)-n:]}
	isNew := map[string]bool{}
	for _, r := range v.New {
		isNew[r.ID] = true
	}
	var old []*Run
	for _, r := range runs {
		if !isNew[r.ID] {
			old = append(old, r)
		}
	}
	before := map[Key]*Analysis{}
	for _, s := range Build(old) {
		before[s.Key] = Analyze(s)
	}
	for _, s := range Build(runs) {
		if !slices.Contains(PrimaryMetrics, s.Key.Metric) {
			continue
		}
		a := Analyze(s)
		v.Series = append(v.Series, a)
		m := s.Metric()
		for _, c := range a.Changes {
			if !c.Regression(m) || known(before[s.Key], a, c) {
				continue
			}
			f := Finding{Analysis: a, Change: c}
			if a.Unstable {
				v.Unstable = append(v.Unstable, f)
			} else {
				v.Regressions = append(v.Regressions, f)
			}
		}
	}
	return v
}

// known reports whether the older analysis has change point c of the newer
// one already: a change point whose first point after is c's, or a
// neighbour of it.
func known(old, a *Analysis, c ChangePoint) bool {
	if old == nil {
		return false
	}
	for _, oc := range old.Changes {
		p := old.Points[oc.At]
		for at := max(c.At-1, 0); at <= min(c.At+1, len(a.Points)-1); at++ {
			if q := a.Points[at]; q.Run.ID == p.Run.ID && q.Mesh.Name == p.Mesh.Name {
				return true
			}
		}
	}
	return false
}

// Err is the verdict as an error for the command line: ErrRegression when
// the gate found a regression, else nil.
func (v *Verdict) Err() error {
	if len(v.Regressions) == 0 {
		return nil
	}
	return fmt.Errorf("the newest runs introduced %d change point(s) that made a primary metric worse: %w", len(v.Regressions), ErrRegression)
}
