package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestCostResultsFlags checks that --results and its companions reach the
// cost model; the figures themselves are checked in internal/cost.
func TestCostResultsFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}},
		[]string{"cost", "--results", dir, "--node", "n2-standard-4", "--nodes", "7", "-o", "json"})
	if err != nil {
		t.Fatal(err)
	}
	var e cost.ResultsEstimate
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	p := e.Consumption.Projection
	if p == nil || p.Nodes != 7 || e.Allocation == nil || e.Allocation.Rows[0].Machine != "n2-standard-4" || e.Study != "bookinfo" {
		t.Fatalf("estimate = %+v, want the study priced on n2-standard-4, projected to 7 nodes", e)
	}
	// --rps and --extrapolate reach it too: these results have no capacity
	// search, so no fit to project by.
	err = Run(context.Background(), Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		[]string{"cost", "--results", dir, "--rps", "2000", "--extrapolate"})
	if err == nil || !strings.Contains(err.Error(), "idle and per-request") {
		t.Errorf("--rps 2000 --extrapolate on results without a search: %v, want the model's refusal", err)
	}
}
