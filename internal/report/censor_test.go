package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestCensoredFiguresSayWhatTheyAre: where a figure is censored, the
// JSON marks its interval's ends too, the text says what "≥" means, and
// the verdict table shows the bound.
func TestCensoredFiguresSayWhatTheyAre(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteTails(dir, resultstest.TailStudy{Reps: 6, Timeout: 5 * time.Second, Rate: 1000, Meshes: []resultstest.TailMesh{
		{Name: "baseline", Profile: "baseline", Served: map[time.Duration]int64{time.Millisecond: 20_000}},
		{Name: "times-out", Profile: "sidecar", Served: map[time.Duration]int64{2 * time.Millisecond: 19_700}, Failed: 300},
	}}); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	data := reportJSON(t, doc)
	if err := validate(compileReportSchema(t), data); err != nil {
		t.Fatalf("report -o json of censored figures does not validate: %v", err)
	}
	var out struct {
		Verdict struct {
			Meshes []struct {
				Mesh     string  `json:"mesh"`
				AddedP99 *Figure `json:"added_p99_ms"`
			} `json:"meshes"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Verdict.Meshes {
		if f := m.AddedP99; m.Mesh == "times-out" && (f == nil || f.LowBound != BoundLower || f.HighBound != BoundLower) {
			t.Errorf("added p99 of the mesh timing out %+v, want its ends marked lower bounds", f)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), censoredNote) {
		t.Error("the report shows censored figures without saying what ≥ means")
	}
	if !strings.Contains(md.String(), "≥ +") {
		t.Errorf("the verdict table does not show the censored added p99 as a bound:\n%.2000s", md.String())
	}
}
