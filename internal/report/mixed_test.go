package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestReportShowsMixedProvenance: cells measured after a resume with
// --resume-anyway on another Envoy are named in the provenance, and the
// SMP export names both Envoys.
func TestReportShowsMixedProvenance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ix.Provenance.Platform.Host, ix.Provenance.Platform.EnvoyVersion = "bench-1", "1.40.0"
	other := ix.Provenance.Platform
	other.Host, other.EnvoyVersion = "bench-2", "1.41.0"
	ix.Cells[0].Platform, ix.Cells[1].Platform = &other, &other
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Build(d)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("2 of %d cells on host bench-2", len(ix.Cells))
	if !strings.Contains(md.String(), "### Mixed provenance") || !strings.Contains(md.String(), want) || !strings.Contains(md.String(), ix.Cells[1].ID) {
		t.Errorf("report.md does not show the mix (%q)", want)
	}
	if got := mixedPlatform(ix).EnvoyVersion; got != "1.40.0 + 1.41.0" {
		t.Errorf("the export's Envoy: %q", got)
	}
	if got := mixedPlatform(&results.Index{Provenance: results.Provenance{Platform: infra.Info{EnvoyVersion: "1.40.0"}}}).EnvoyVersion; got != "1.40.0" {
		t.Errorf("unmixed: %q", got)
	}
}
