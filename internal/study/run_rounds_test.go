package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
)

// adaptiveStudy is studySource with the given repetitions and one load
// configuration: 3 meshes per round.
func adaptiveStudy(reps string) string {
	return strings.Replace(strings.Replace(studySource, "repetitions: 2", "repetitions: "+reps, 1),
		"- {param: connections, values: [16, 32]}", "- {param: connections, values: [16]}", 1)
}

func TestRunPlannedRounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reps      string
		latencyAt func(profile string, n int) time.Duration
		ran       int
		stop      string
	}{
		{
			name: "steady overheads plan the pilot alone",
			reps: "{min: 3, max: 6, ci: 0.1}",
			ran:  3, stop: StopPlanned,
		},
		{
			// The sidecar's latency swings between 2 and 6 ms from one
			// measurement to the next: its 4 ms overhead needs more units
			// than the maximum to be known within 10%.
			name: "noisy overheads plan the maximum",
			reps: "{min: 3, max: 5, ci: 0.1}",
			latencyAt: func(profile string, n int) time.Duration {
				if profile == "sidecar" {
					return time.Duration(2+4*(n%2)) * time.Millisecond
				}
				return time.Millisecond
			},
			ran: 5, stop: StopPlanned,
		},
		{
			name: "a fixed count runs as written",
			reps: "4",
			ran:  4, stop: StopFixed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.latency["sidecar"] = 3 * time.Millisecond
			f.latency["ambient"] = 1500 * time.Microsecond
			f.latencyAt = tt.latencyAt
			dir := filepath.Join(t.TempDir(), "out")
			ix := run(t, runOptions(t, adaptiveStudy(tt.reps), f, dir, nil))
			if ix.Rounds == nil || ix.Rounds.Ran != tt.ran || ix.Rounds.Stop != tt.stop || ix.Rounds.Deployments != tt.ran {
				t.Fatalf("rounds %+v, want %d ran in as many deployments, stopped %q", ix.Rounds, tt.ran, tt.stop)
			}
			if len(ix.Cells) != 3*tt.ran || ix.Planned != 3*tt.ran {
				t.Errorf("%d cells of %d planned, want %d", len(ix.Cells), ix.Planned, 3*tt.ran)
			}
			got, err := results.ReadIndex(dir)
			if err != nil || got.Rounds == nil || *got.Rounds != *ix.Rounds {
				t.Errorf("stored rounds %+v (%v), want %+v", got.Rounds, err, ix.Rounds)
			}
		})
	}
}

func TestPlanFrom(t *testing.T) {
	t.Parallel()
	reps := Repetitions{Min: 6, Max: 12, CI: 0.1}
	tests := []struct {
		rel   float64
		units int
		per   int
		want  int
	}{
		{0.05, 6, 1, 6},          // narrow already: the pilot
		{0.12, 6, 1, 9},          // 6 × 1.44 = 8.6 units
		{0.3, 6, 1, 12},          // 54 units, capped
		{0.12, 3, 2, 10},         // 4.3 deployments of 2 rounds: 5
		{0.16, 3, 2, 12},         // 7.7 deployments: capped at 12 rounds
		{math.Inf(1), 1, 1, 12},  // no interval: the maximum
		{0.12, 6, 0, 9},          // one deployment: rounds are the units
		{0.11, 6, 5, 10},         // 7.3 units of 5 rounds: 10
		{0.2, 6, 5, 10},          // capped, in whole deployments of 5
		{0.0999, 6, 1, reps.Min}, // within ci
		{0.1001, 6, 1, reps.Min + 1},
	}
	for _, tt := range tests {
		got, why := planFrom(analysis.Precision{Mesh: "sidecar", Relative: tt.rel, Units: tt.units}, reps, tt.per)
		if got != tt.want || !strings.Contains(why, "sidecar") {
			t.Errorf("relative %v over %d units, %d a deployment: %d rounds (%s), want %d", tt.rel, tt.units, tt.per, got, why, tt.want)
		}
	}
}

// TestRunDeployments checks that every deployment has its own platform
// and calibration: the platform comes down and up between deployments,
// the first calibration measures every mesh and the later ones the
// reference alone, each cell records its deployment, and each deployment
// its own scaling.
func TestRunDeployments(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.rates = map[string]float64{"baseline": 4000, "sidecar": 400, "ambient": 1200}
	src := strings.Replace(adaptiveStudy("4"), "repetitions: 4", "repetitions: 4\ndeployments: 2\nscaling: {fraction: 0.25, measure: 10s, warmup: 2s}", 1)
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, src, f, dir, nil))
	if ix.Rounds.Deployments != 2 || len(ix.Provenance.Deployments) != 2 {
		t.Fatalf("rounds %+v, deployments %+v; want 2", ix.Rounds, ix.Provenance.Deployments)
	}
	if ups, downs := f.count("up "), f.count("down"); ups != 2 || downs < 2 {
		t.Errorf("%d ups and %d downs, want the platform brought up twice (and down after each)", ups, downs)
	}
	for i, d := range ix.Provenance.Deployments {
		if d.Index != i+1 || d.Scaling == nil || d.Scaling.Factor <= 0 || d.Scaling.Reference != "sidecar" {
			t.Errorf("deployment %d: %+v", i+1, d)
		}
	}
	if len(ix.Provenance.Deployments[0].Scaling.Capacities) != 3 || len(ix.Provenance.Deployments[1].Scaling.Capacities) != 1 {
		t.Errorf("capacities %v then %v: want every mesh first, the reference after",
			ix.Provenance.Deployments[0].Scaling.Capacities, ix.Provenance.Deployments[1].Scaling.Capacities)
	}
	if ix.Provenance.Scaling.Factor != ix.Provenance.Deployments[0].Scaling.Factor {
		t.Errorf("provenance scaling %+v is not the first deployment's", ix.Provenance.Scaling)
	}
	for _, s := range ix.Cells {
		if want := (s.Repetition-1)/2 + 1; s.Deployment != want {
			t.Errorf("cell %s of round %d ran in deployment %d, want %d", s.ID, s.Repetition, s.Deployment, want)
		}
	}
	// Rounds of one deployment run before the next's.
	for i := 1; i < len(ix.Cells); i++ {
		if ix.Cells[i].Deployment < ix.Cells[i-1].Deployment {
			t.Errorf("cell %s of deployment %d ran after deployment %d's", ix.Cells[i].ID, ix.Cells[i].Deployment, ix.Cells[i-1].Deployment)
		}
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil || d.Deployments() != 2 {
		t.Fatalf("analysis reads %d deployments (%v)", d.Deployments(), err)
	}
}

func TestDeploymentsValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ reps, deps, want string }{
		{"6", "4", "must divide repetitions"},
		{"2", "3", "need at least as many rounds"},
		{"4", "0", ""}, // the default
	} {
		src := strings.Replace(adaptiveStudy(tt.reps), "repetitions: "+tt.reps, "repetitions: "+tt.reps+"\ndeployments: "+tt.deps, 1)
		_, err := Parse([]byte(src), "testdata")
		if tt.want == "" {
			if err != nil {
				t.Errorf("deployments %s of %s: %v", tt.deps, tt.reps, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("deployments %s of %s: %v, want %q", tt.deps, tt.reps, err, tt.want)
		}
	}
}

func TestRunRerunsNoisyCells(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.latency["sidecar"] = 3 * time.Millisecond
	// The first two measurements find a hog on the host; the ambient
	// cells find one every time.
	f.host = func(profile string, n int) *infra.HostCPU {
		noise := 0.01
		if n <= 2 || profile == "ambient" {
			noise = 0.6
		}
		return &infra.HostCPU{CPUs: 2, Noise: noise, Nodes: []infra.NodeCPU{{Name: "load", Role: infra.NodeLoad, CPUs: 1, Busy: 0.3}}}
	}
	dir := filepath.Join(t.TempDir(), "out")
	ix := run(t, runOptions(t, adaptiveStudy("3"), f, dir, nil))
	if ix.Noise == nil || ix.Noise.Threshold != results.DefaultNoiseThreshold || ix.Noise.Retries != DefaultNoiseRetries {
		t.Fatalf("noise guard %+v", ix.Noise)
	}
	if len(ix.Cells) != 9 {
		t.Fatalf("%d cells, want 9: a re-run replaces its cell", len(ix.Cells))
	}
	reruns := 0
	for _, s := range ix.Cells {
		if s.HostNoise == nil {
			t.Fatalf("cell %s has no host noise", s.ID)
		}
		switch {
		case s.Mesh == "ambient":
			if !s.Noisy || s.Attempt != 3 || len(s.Attempts) != 2 || s.File != results.AttemptFile(s.ID, 3) {
				t.Errorf("ambient cell %s: noisy %v, attempt %d of %+v, want the third of three noisy ones", s.ID, s.Noisy, s.Attempt, s.Attempts)
			}
		case s.Attempt == 2:
			reruns++
			if s.SHA256 == "" || s.Bytes == 0 {
				t.Errorf("re-run cell %s has no file hash in the index", s.ID)
			}
			if s.Noisy || len(s.Attempts) != 1 || !s.Attempts[0].Noisy || *s.Attempts[0].HostNoise != 0.6 {
				t.Errorf("re-run cell %s: %+v", s.ID, s)
			}
		case s.Attempt != 1 || s.Noisy:
			t.Errorf("cell %s: attempt %d, noisy %v", s.ID, s.Attempt, s.Noisy)
		}
	}
	// Every attempt's file is kept, as the run wrote it.
	if d := results.CheckCells(dir, ix); len(d) != 0 {
		t.Errorf("attempts' files: %v", d)
	}
	for _, s := range ix.Cells {
		for _, a := range s.Attempts {
			c, err := results.ReadCell(dir, results.Summary{File: a.File})
			if err != nil || c.Attempt != a.Attempt || c.File != a.File || c.ID != s.ID {
				t.Errorf("cell %s attempt %d: file %s holds %+v (%v)", s.ID, a.Attempt, a.File, c, err)
			}
		}
	}
	// Measurements 1 and 2 were noisy; unless one of them was ambient's,
	// both were re-run.
	if reruns < 1 || reruns > 2 {
		t.Errorf("%d non-ambient cells re-run, want 1 or 2", reruns)
	}
	// The analysis leaves the cells that stayed noisy out, and only those.
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Excluded {
		if e.Kind != analysis.KindNoisy || e.Summary.Mesh != "ambient" || !strings.Contains(e.Reason, "still noisy after 3 attempts") {
			t.Errorf("excluded %s: %s %s", e.Summary.ID, e.Kind, e.Reason)
		}
	}
	if len(d.Excluded) != 3 {
		t.Errorf("%d cells excluded, want the 3 ambient ones", len(d.Excluded))
	}
	// Resumed on a quiet host, the complete run measures the three
	// ambient cells again, counting on from their third attempt.
	quiet := newFake()
	quiet.latency["sidecar"] = 3 * time.Millisecond
	quiet.host = func(string, int) *infra.HostCPU {
		return &infra.HostCPU{CPUs: 2, Noise: 0.01, Nodes: []infra.NodeCPU{{Name: "load", Role: infra.NodeLoad, CPUs: 1, Busy: 0.3}}}
	}
	var progress bytes.Buffer
	o := runOptions(t, adaptiveStudy("3"), quiet, dir, &progress)
	o.Resume = true
	ix = run(t, o)
	if quiet.measures != 3 || !ix.Complete || len(ix.Cells) != 9 {
		t.Fatalf("resume measured %d cells, complete %v, %d cells; want the 3 ambient ones", quiet.measures, ix.Complete, len(ix.Cells))
	}
	if !strings.Contains(progress.String(), "re-measuring 3 cells that stayed noisy") {
		t.Errorf("progress:\n%s", progress.String())
	}
	for _, s := range ix.Cells {
		if s.Mesh == "ambient" && (s.Noisy || s.Attempt != 4 || len(s.Attempts) != 3) {
			t.Errorf("resumed ambient cell %s: noisy %v, attempt %d, other attempts %+v", s.ID, s.Noisy, s.Attempt, s.Attempts)
		}
	}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrComplete) {
		t.Errorf("resuming again: %v, want ErrComplete", err)
	}
}

func TestRecordDistortsOnLoadNodeAndShortfall(t *testing.T) {
	t.Parallel()
	f := newFake()
	// A closed loop: 10 ms at 100 req/s keeps 1 of 64 connections busy.
	for _, m := range []string{"baseline", "sidecar", "ambient"} {
		f.latency[m] = 10 * time.Millisecond
	}
	f.rate = 100
	f.host = func(profile string, n int) *infra.HostCPU {
		busy := 0.2
		if profile == "sidecar" {
			busy = 0.97 // 50 generators sharing one CPU
		}
		return &infra.HostCPU{CPUs: 2, Nodes: []infra.NodeCPU{{Name: "load", Role: infra.NodeLoad, CPUs: 1, Busy: busy}}}
	}
	src := strings.Replace(adaptiveStudy("1"), "load: {rate: 100, duration: 10s, warmup: 2s}", "load: {duration: 10s, warmup: 2s}", 1)
	src = strings.Replace(src, "- {param: connections, values: [16]}", "- {param: connections, values: [1]}", 1)
	ix := run(t, runOptions(t, src, f, t.TempDir(), nil))
	for _, s := range ix.Cells {
		want := results.StatusOK
		if s.Mesh == "sidecar" {
			want = results.StatusDistorted
		}
		if s.Status != want || (want == results.StatusDistorted && !strings.Contains(s.Reason, "load node")) {
			t.Errorf("cell %s: %s (%s), want %s", s.ID, s.Status, s.Reason, want)
		}
	}
	src = strings.Replace(src, "values: [1]", "values: [64]", 1)
	ix = run(t, runOptions(t, src, f, t.TempDir(), nil))
	for _, s := range ix.Cells {
		if s.Status != results.StatusDistorted || !strings.Contains(s.Reason, fmt.Sprintf("of its %d connections busy", 64)) {
			t.Errorf("cell %s at 64 connections: %s (%s), want a closed-loop shortfall", s.ID, s.Status, s.Reason)
		}
	}
}
