package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/results"
)

// progress tells where a run is: the cell, the repetition, the time spent
// and the time left. The time left is the plan's estimate for the cells
// still to run, corrected by how the cells run so far compared with their
// own estimates.
type progress struct {
	plan      *Plan
	started   time.Time
	left      int           // cells still to run
	leftEst   time.Duration // their estimated time
	doneEst   time.Duration // the estimated time of the cells run so far
	cellStart time.Time
}

func newProgress(plan *Plan, done map[string]bool) *progress {
	p := &progress{plan: plan, started: time.Now()}
	for _, c := range plan.Cells {
		if !done[c.ID] {
			p.left++
			p.leftEst += c.Estimate
		}
	}
	return p
}

// index is the cell's place in the plan, from 0.
func (p *progress) index(id string) int {
	return slices.IndexFunc(p.plan.Cells, func(c Cell) bool { return c.ID == id })
}

// remaining is the expected time left.
func (p *progress) remaining() time.Duration {
	if p.doneEst <= 0 {
		return p.leftEst
	}
	ratio := float64(time.Since(p.started)) / float64(p.doneEst)
	return time.Duration(float64(p.leftEst) * ratio)
}

func (p *progress) start(i int, c Cell) string {
	p.cellStart = time.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "[%d/%d] %s rep %d/%d", i+1, len(p.plan.Cells), c.Mesh.Name, c.Repetition, p.plan.Repetitions)
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		fmt.Fprintf(&b, " %s=%s", k, c.Params[k])
	}
	fmt.Fprintf(&b, " · elapsed %s · left ~%s", round(time.Since(p.started)), round(p.remaining()))
	return b.String()
}

func (p *progress) finish(i int, c Cell, s results.Summary) string {
	p.left--
	p.leftEst -= c.Estimate
	p.doneEst += c.Estimate
	took := round(time.Since(p.cellStart))
	prefix := fmt.Sprintf("[%d/%d] %s rep %d: %s:", i+1, len(p.plan.Cells), c.Mesh.Name, c.Repetition, s.Status)
	if s.Status == results.StatusFailed {
		return fmt.Sprintf("%s %s (%s)", prefix, s.Reason, took)
	}
	line := fmt.Sprintf("%s p50 %.2fms p99 %.2fms, %.1f req/s, %d errors (%s)",
		prefix, s.LatencyMs.P50, s.LatencyMs.P99, s.AchievedRate, s.Errors, took)
	if s.Status == results.StatusDistorted {
		line += "; " + s.Reason
	}
	if s.Noisy {
		line += "; noisy: " + s.NoiseReason() + ", to run again at the end"
	}
	return line
}
