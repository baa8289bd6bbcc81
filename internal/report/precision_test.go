package report

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestReportSaysRoundsAndNoise marks one cell re-run and quiet and one
// still noisy, and checks that the report says so and leaves the noisy
// one out, and that a lab run says what it did not measure.
func TestReportSaysRoundsAndNoise(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ix.Rounds = &results.Rounds{Min: 5, Max: 8, CI: 0.1, Ran: 5, Stop: "narrow"}
	ix.Noise = &results.NoiseGuard{Threshold: 0.05, Retries: 2, Calibration: map[string]float64{resultstest.Baseline: 0.01}}
	ix.Provenance.Platform.Name = "lab"
	quiet, loud := 0.01, 0.9
	var noisyID, rerunID string
	for i := range ix.Cells {
		c := &ix.Cells[i]
		c.HostNoise, c.Attempt = &quiet, 1
		if c.Status != results.StatusOK {
			continue
		}
		switch {
		case rerunID == "":
			rerunID, c.Attempt = c.ID, 2
			c.Attempts = []results.Attempt{attemptOf(t, dir, *c, 1, &loud)}
		case noisyID == "" && c.Mesh == resultstest.Sidecar:
			noisyID, c.Attempt, c.Noisy, c.HostNoise = c.ID, 3, true, &loud
			c.Attempts = []results.Attempt{attemptOf(t, dir, *c, 1, &loud), attemptOf(t, dir, *c, 2, &loud)}
		}
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	var precision, unmeasured, excluded string
	for _, s := range doc.Sections {
		var b strings.Builder
		for _, bl := range s.Blocks {
			b.WriteString(bl.Text + strings.Join(bl.List, "\n"))
			if bl.Table != nil {
				for _, r := range bl.Table.Rows {
					b.WriteString(strings.Join(r, " ") + "\n")
				}
			}
		}
		switch s.ID {
		case "precision":
			precision = b.String()
		case "not-measured":
			unmeasured = b.String()
		case "excluded":
			excluded = b.String()
		}
	}
	for _, want := range []string{"5 interleaved rounds (at least 5, at most 8)", "within ±10%", "over 0.05 cores is noisy",
		"noisiest cell recorded 0.900", "2 cells were noisy and run again at the end of the study: " + rerunID + ", " + noisyID,
		"1 cells are noisy in the results and left out of every figure (see Excluded cells): " + noisyID,
		"Attempts whose figures are not used, each kept in its file: " + rerunID + " used attempt 2, not attempt 1 (noisy, 0.90 cores of host noise, " + results.AttemptFile(rerunID, 1) + ".old)"} {
		if !strings.Contains(precision, want) {
			t.Errorf("precision section lacks %q:\n%s", want, precision)
		}
	}
	if !strings.Contains(excluded, noisyID) || !strings.Contains(excluded, "still noisy after 3 attempts") || strings.Contains(excluded, rerunID+" ") {
		t.Errorf("excluded cells:\n%s", excluded)
	}
	// The fixture measured a control plane and CNI agents; the lab note
	// still says what the lab does not emulate.
	if !strings.Contains(unmeasured, "no control plane") || strings.Contains(unmeasured, "no cell measured it") {
		t.Errorf("not-measured section:\n%s", unmeasured)
	}
}

// attemptOf writes an earlier, noisy attempt n of s's cell to its own
// file, as the runner keeps it.
func attemptOf(t *testing.T, dir string, s results.Summary, n int, noise *float64) results.Attempt {
	t.Helper()
	c, err := results.ReadCell(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	c.Attempt, c.File, c.Noisy, c.HostNoise = n, results.AttemptFile(s.ID, n)+".old", true, noise
	if err := results.WriteCell(dir, c); err != nil {
		t.Fatal(err)
	}
	return results.AttemptOf(c.Summary)
}
