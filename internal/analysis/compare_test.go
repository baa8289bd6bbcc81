package analysis

import (
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func TestCompareFindsARegression(t *testing.T) {
	t.Parallel()
	a, err := Load(fixtureDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The same study run again: new noise, and the sidecar 30% slower.
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 2, Slowdown: map[string]float64{resultstest.Sidecar: 1.3}}); err != nil {
		t.Fatal(err)
	}
	b, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(a, b, []Metric{P50, P99, QPS})
	if len(c.OnlyA)+len(c.OnlyB) != 0 {
		t.Errorf("groups in one run only: %v %v", c.OnlyA, c.OnlyB)
	}
	// Three metrics a group; the fixture is a closed loop, so no latency
	// overheads (Little's law: they would restate the QPS).
	if want := len(b.Meshes) * len(b.Configs) * 3; len(c.Changes) != want {
		t.Errorf("%d changes, want %d", len(c.Changes), want)
	}
	for _, ch := range c.Changes {
		if ch.Config.Params["replicas.productpage"] == "1" {
			// Three deployments a side (two where a cell failed): 90% at
			// most, never measurable.
			if ch.Regressed() || ch.Improved() || !ch.Diff.Delta.BelowNominal() {
				t.Errorf("%s: %+v is judged from three deployments", ch, ch.Diff.Delta)
			}
			continue
		}
		switch {
		case ch.Mesh == resultstest.Sidecar && ch.Metric == P50:
			if !ch.Regressed() || ch.Diff.Pct.Median < 20 {
				t.Errorf("sidecar p50 at %s: %+v, want a regression of about 30%%", ch.Config.Label(), ch.Diff)
			}
		case ch.Mesh == resultstest.Sidecar && ch.Metric == QPS:
			if !ch.Regressed() {
				t.Errorf("sidecar QPS at %s did not regress: %+v", ch.Config.Label(), ch.Diff)
			}
		case ch.Mesh == resultstest.Baseline && ch.Metric == P50:
			// Same model, different noise: nothing to report.
			if ch.Regressed() || ch.Improved() {
				if d := ch.Diff.Pct.Median; d > 5 || d < -5 {
					t.Errorf("baseline p50 at %s changed by %v%%", ch.Config.Label(), d)
				}
			}
		}
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    Diff
		want Verdict
	}{
		{"higher", Diff{Delta: Estimate{Median: 1, Lo: 0.5, Hi: 1.5, N: 6, Level: 0.96875}}, Higher},
		{"lower", Diff{Delta: Estimate{Median: -1, Lo: -1.5, Hi: -0.2, N: 6, Level: 0.96875}}, Lower},
		{"spans zero", Diff{Delta: Estimate{Median: 1, Lo: -0.1, Hi: 2, N: 6, Level: 0.96875}}, NoDifference},
		// Three units reach 75%: excluding zero there says nothing at 95%.
		{"below the nominal level", Diff{Delta: Estimate{Median: 1, Lo: 0.5, Hi: 1.5, N: 3, Level: 0.75}}, TooFewRuns},
		{"no interval", Diff{Delta: Estimate{Median: 5, Lo: 5, Hi: 5, N: 1}}, TooFewRuns},
	}
	for _, tt := range tests {
		if got := Judge(tt.d); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
