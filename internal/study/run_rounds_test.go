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

// adaptiveStudy is studySource with adaptive repetitions and one load
// configuration: 3 meshes per round.
func adaptiveStudy(reps string) string {
	return strings.Replace(strings.Replace(studySource, "repetitions: 2", "repetitions: "+reps, 1),
		"- {param: connections, values: [16, 32]}", "- {param: connections, values: [16]}", 1)
}

func TestRunAdaptiveRounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reps      string
		latencyAt func(profile string, n int) time.Duration
		ran       int
		stop      string
	}{
		{
			name: "steady overheads stop at the minimum",
			reps: "{min: 3, max: 6, ci: 0.1}",
			ran:  3, stop: StopNarrow,
		},
		{
			// The sidecar's latency swings between 2 and 6 ms from one
			// measurement to the next: its 4 ms overhead is never known
			// to within 10%.
			name: "noisy overheads run to the maximum",
			reps: "{min: 3, max: 5, ci: 0.1}",
			latencyAt: func(profile string, n int) time.Duration {
				if profile == "sidecar" {
					return time.Duration(2+4*(n%2)) * time.Millisecond
				}
				return time.Millisecond
			},
			ran: 5, stop: StopMax,
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
			if ix.Rounds == nil || ix.Rounds.Ran != tt.ran || ix.Rounds.Stop != tt.stop {
				t.Fatalf("rounds %+v, want %d ran, stopped %q", ix.Rounds, tt.ran, tt.stop)
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

func TestPrecisionVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel  float64
		stop string
	}{{0.05, StopNarrow}, {0.0999, StopNarrow}, {0.1, ""}, {0.4, ""}, {math.Inf(1), ""}}
	for _, tt := range tests {
		stop, why := precisionVerdict(analysis.Precision{Mesh: "sidecar", Relative: tt.rel}, 0.1)
		if stop != tt.stop || !strings.Contains(why, "sidecar") {
			t.Errorf("relative half-width %v: %q (%s), want %q", tt.rel, stop, why, tt.stop)
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
