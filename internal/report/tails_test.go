package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestTimeoutsCensorThePercentile: a mesh failing 1.5% of its requests
// (an open loop, 5 s timeout) has them in its percentiles at the timeout:
// its p99 and p99.9 land on them and show as "≥ 5000", its added p99 as
// at least that over the baseline, in the tables and in `report -o json`.
func TestTimeoutsCensorThePercentile(t *testing.T) {
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
	var row []string
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			if s.ID == "latency" && b.Table != nil {
				for _, r := range b.Table.Rows {
					if r[0] == "times-out" {
						row = r
					}
				}
			}
		}
	}
	if len(row) < 7 {
		t.Fatalf("no latency row of the mesh timing out: %q", row)
	}
	for i, p := range map[int]string{5: "p99", 6: "p99.9"} {
		cell := row[i]
		v, _ := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(cell, "≥ "))[0], 64)
		if !strings.HasPrefix(cell, "≥ ") || v < 4990 {
			t.Errorf("%s of a mesh failing 1.5%% of its requests at a 5 s timeout: %q, want ≥ 5000 (censored)", p, cell)
		}
	}
	if !strings.HasPrefix(row[3], "2.00") {
		t.Errorf("p50 of the mesh timing out: %q, want an exact 2 ms", row[3])
	}
	var out struct {
		Verdict struct {
			Meshes []struct {
				Mesh     string  `json:"mesh"`
				AddedP50 *Figure `json:"added_p50_ms"`
				AddedP99 *Figure `json:"added_p99_ms"`
			} `json:"meshes"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(reportJSON(t, doc), &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Verdict.Meshes {
		if m.Mesh != "times-out" {
			continue
		}
		if f := m.AddedP99; f == nil || f.Bound != BoundLower || f.Value < 4990 {
			t.Errorf("report -o json: added p99 of the mesh timing out %+v, want a lower bound near +5000 ms", f)
		}
		if f := m.AddedP50; f == nil || f.Bound != "" {
			t.Errorf("report -o json: added p50 of the mesh timing out %+v, want an exact figure", f)
		}
	}
}

// addedLatency matches what an added latency looks like in a report:
// "adds 37.1 ms", "Added p50", "p50 over baseline", an overhead chart's
// axis.
var addedLatency = regexp.MustCompile(`adds [0-9][0-9.]* ms|[Aa]dded p(50|95|99)|p(50|95|99) over baseline|added latency \(ms\)|latency over baseline`)

// TestClosedLoopShowsNoAddedLatency: the fixture is a closed loop (32 to
// 128 connections, no rate), whose latency is its connections over its
// throughput, so no table, chart, sentence, threshold or JSON figure of
// its report is an added latency; its summary gives throughput against
// the baseline's and the meshes' own p50 and p99, and says why once.
func TestClosedLoopShowsNoAddedLatency(t *testing.T) {
	t.Parallel()
	d := loadFixture(t)
	d.StudyFile = []byte(resultstest.WithThresholds(resultstest.StudyYAML, "p99_added_ms < 1000"))
	doc := Build(d)
	var md bytes.Buffer
	if err := WriteMarkdown(&md, doc); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if m := addedLatency.FindString(line); m != "" {
			t.Fatalf("a closed-loop cell shows added latency: %q in %.300s", m, line)
		}
	}
	for _, c := range doc.Charts() {
		if strings.HasPrefix(c.File, "overhead-") {
			t.Errorf("a closed-loop study draws the overhead chart %s", c.File)
		}
	}
	data := reportJSON(t, doc)
	if bytes.Contains(data, []byte(`"added_p`)) {
		t.Error("report -o json of a closed loop holds an added latency")
	}
	for _, th := range doc.Thresholds {
		if th.Status != ThresholdNotMeasured || !strings.Contains(th.Why, "Little's law") {
			t.Errorf("threshold %s for %s on a closed loop: %s (%s), want not measured, saying why", th.Threshold, th.Mesh, th.Status, th.Why)
		}
	}
	var summary *Section
	for i := range doc.Sections {
		if doc.Sections[i].ID == "summary" {
			summary = &doc.Sections[i]
		}
	}
	if summary == nil {
		t.Fatal("no summary")
	}
	found := false
	for _, b := range summary.Blocks {
		if b.Table == nil || !slicesContains(b.Table.Header, "Throughput over baseline's") {
			continue
		}
		found = len(b.Table.Rows) > 0 && strings.Contains(strings.Join(b.Table.Notes, " "), "Little's law")
		for _, r := range b.Table.Rows {
			if !strings.Contains(r[3], "x [") {
				t.Errorf("%s at %s: throughput over the baseline's %q, want a ratio with its interval", r[0], r[1], r[3])
			}
		}
	}
	if !found {
		t.Error("the closed loop's summary gives no throughput against the baseline's, or does not say why (Little's law)")
	}
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestMixedLoopsSplitTheOverheads: a study whose 32-connection cells are
// an open loop and whose others are a closed loop shows added latency at
// the open loop alone: the summary's overhead rows and the overhead
// charts' bars are the open configurations', the closed ones are in the
// throughput table.
func TestMixedLoopsSplitTheOverheads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ix.Cells {
		if s.Params["connections"] != "32" {
			continue
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		c.Load.Options.Rate = 100
		if c.Merged != nil {
			c.Merged.Options.Rate = 100
			for j := range c.Generators {
				c.Generators[j].Options.Rate = 100
			}
		}
		if err := results.WriteCell(dir, c); err != nil {
			t.Fatal(err)
		}
		ix.Cells[i] = c.Summary
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	var open, closed int
	for _, s := range doc.Sections {
		if s.ID != "summary" {
			continue
		}
		for _, b := range s.Blocks {
			if b.Table == nil {
				continue
			}
			for _, r := range b.Table.Rows {
				isOpen := strings.HasPrefix(r[1], "32 / ")
				switch {
				case slicesContains(b.Table.Header, "p50 over baseline") && isOpen:
					open++
				case slicesContains(b.Table.Header, "Throughput over baseline's") && !isOpen:
					closed++
				default:
					t.Errorf("summary row %q in the table %q", r[:2], b.Table.Header)
				}
			}
		}
	}
	if open != 4 || closed != 8 {
		t.Errorf("summary: %d open-loop overhead rows and %d closed-loop throughput rows, want 4 and 8", open, closed)
	}
	charts := 0
	for _, c := range doc.Charts() {
		if !strings.HasPrefix(c.File, "overhead-") {
			continue
		}
		charts++
		if !strings.Contains(c.SVG, "32 / 1") || strings.Contains(c.SVG, "64 / 1") || strings.Contains(c.SVG, "128 / 4") {
			t.Errorf("%s draws other configurations than the open loop's", c.File)
		}
	}
	if charts != 3 {
		t.Errorf("%d overhead charts, want p50, p95 and p99 over the open loop", charts)
	}
}
