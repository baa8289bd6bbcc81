package history

import (
	"testing"

	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestThresholdsKeepTheSeries: thresholds judge a run's figures and do
// not change them, so a study given thresholds stays in its series.
func TestThresholdsKeepTheSeries(t *testing.T) {
	t.Parallel()
	plain, judged := t.TempDir(), t.TempDir()
	if _, err := resultstest.Write(plain, resultstest.Options{Seed: 1, Requests: 3000}); err != nil {
		t.Fatal(err)
	}
	if _, err := resultstest.Write(judged, resultstest.Options{Seed: 1, Requests: 3000, Thresholds: []string{"p99_added_ms < 5"}}); err != nil {
		t.Fatal(err)
	}
	a, err := Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(judged)
	if err != nil {
		t.Fatal(err)
	}
	if a.StudyHash == b.StudyHash || a.ConfigHash != b.ConfigHash {
		t.Errorf("study hashes %s and %s, config hashes %s and %s: want the study files apart and the configuration the same", a.StudyHash, b.StudyHash, a.ConfigHash, b.ConfigHash)
	}
}
