package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestResampleFixture resamples the results fixture's deployments: every
// kind of figure the verdict and compare show is measured; on the
// smoothed population every figure of six deployments covers at least
// 94% (less its sampling error), and the
// order-statistic interval of six covers its median at about its exact
// level (1 - 2/64); three deployments' [min, max] covers more than its
// 75% on the discrete population (1 - 2/27 when the values are
// distinct) and about 75% on the smoothed one.
func TestResampleFixture(t *testing.T) {
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 3, IstiodTwin: true}); err != nil {
		t.Fatal(err)
	}
	rows, err := resampleDir(dir, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range rows {
		seen[w.figure] = true
		n := len(w.units)
		where := w.figure + " " + w.mesh + " at " + w.config
		switch {
		case w.kind == kindMedian && n == 6 && !strings.HasPrefix(w.figure, "parity"):
			if w.coverage < 0.95 || w.coverage > 0.99 {
				t.Errorf("%s: six units' median interval covered %.2f%% of the smoothed population, want about 96.9%%", where, 100*w.coverage)
			}
		case w.kind == kindMedian && n == 3 && !strings.HasPrefix(w.figure, "parity"):
			if w.shown != 0.75 || w.discrete < 0.9 || w.coverage < 0.7 || w.coverage > 0.8 {
				t.Errorf("%s: three units' [min, max] shown %.2f%%, covered %.2f%% discrete and %.2f%% smoothed; want 75%%, above 90%%, about 75%%",
					where, 100*w.shown, 100*w.discrete, 100*w.coverage)
			}
		}
		// At 1,000 resamples a coverage's sampling error is about 0.7
		// points: 93% is 94% less that, and a true FAIL well below.
		if n == 6 && w.coverage < 0.93 {
			t.Errorf("%s: %.2f%% covered, shown %.2f%%: %s", where, 100*w.coverage, 100*w.shown, w.verdict())
		}
	}
	for _, f := range []string{"p50", "USD per million requests", "added p50", "added p99, A/A", "p50, A/A", "QPS ratio", "parity added p50 ratio"} {
		if !seen[f] {
			t.Errorf("no figure %q resampled; have %v", f, seen)
		}
	}
	var out bytes.Buffer
	if _, err := resampleRun(&out, dir, 100, 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "USD per million requests") || !strings.Contains(out.String(), "smoothed") {
		t.Errorf("output lacks the price row or the header:\n%s", out.String())
	}
}
