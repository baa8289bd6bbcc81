package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/search"
)

func loadCapacityFixture(t *testing.T) *analysis.Dataset {
	t.Helper()
	dir := t.TempDir()
	if _, err := resultstest.WriteCapacity(dir); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func capacitySection(t *testing.T, doc *Document) Section {
	t.Helper()
	for _, s := range doc.Sections {
		if s.ID == "capacity" {
			return s
		}
	}
	t.Fatal("no capacity section")
	return Section{}
}

func findTable(s Section, header string) *Table {
	for _, b := range s.Blocks {
		if b.Table != nil && len(b.Table.Header) > 1 && b.Table.Header[1] == header {
			return b.Table
		}
	}
	return nil
}

func TestCapacitySection(t *testing.T) {
	t.Parallel()
	d := loadCapacityFixture(t)
	s := capacitySection(t, Build(d))

	caps := findTable(s, "Capacity (req/s)")
	if caps == nil || len(caps.Rows) != 3 {
		t.Fatalf("capacity table %+v", caps)
	}
	for i, m := range resultstest.CapacityMeshes {
		row := caps.Rows[i]
		if row[0] != m.Name || row[1] != num(m.Capacity) || row[2] != num(0.97*m.Capacity)+" to "+num(1.03*m.Capacity) {
			t.Errorf("row %v, want %s at %s with its interval", row, m.Name, num(m.Capacity))
		}
	}

	// The fitted idle and per-request CPU are the fixture's, exactly.
	cpu := findTable(s, "Component")
	if cpu == nil {
		t.Fatal("no CPU table")
	}
	got := map[string][]string{}
	for _, r := range cpu.Rows {
		got[r[0]+"/"+r[1]] = r
	}
	for _, m := range resultstest.CapacityMeshes {
		app := got[m.Name+"/app"]
		if app == nil || app[2] != num(m.AppIdle) || app[3] != num(m.AppPerRPS*1000) {
			t.Errorf("%s app row %v, want idle %s and %s per 1000 req/s", m.Name, app, num(m.AppIdle), num(m.AppPerRPS*1000))
		}
		wantTotal := (m.AppIdle + m.AppPerRPS*m.Capacity + m.ProxyIdle + m.ProxyPerRPS*m.Capacity) / m.Capacity * 1000
		if total := got[m.Name+"/all but load"]; total == nil || total[4] != num(wantTotal) {
			t.Errorf("%s total %v, want %s cores per 1000 req/s", m.Name, total, num(wantTotal))
		}
		if m.ProxyRole != "" {
			p := got[m.Name+"/"+string(m.ProxyRole)]
			if p == nil || p[2] != num(m.ProxyIdle) || p[5] != num(m.ProxyIdle/m.Capacity*1000) {
				t.Errorf("%s %s row %v", m.Name, m.ProxyRole, p)
			}
		}
	}

	// The capacity section prices no request: the verdict's USD per
	// million requests is the report's one dollar figure for it.
	for _, b := range s.Blocks {
		if b.Table != nil && strings.Contains(strings.Join(b.Table.Header, " "), "USD") {
			t.Errorf("the capacity section has a dollar column: %q", b.Table.Header)
		}
	}

	var charts []string
	for _, b := range s.Blocks {
		if b.Chart != nil {
			charts = append(charts, b.Chart.File)
			if strings.HasPrefix(b.Chart.File, "capacity-curve-") && (!strings.Contains(b.Chart.SVG, "SLO: p99 10ms") || !strings.Contains(b.Chart.SVG, "capacity ")) {
				t.Errorf("%s lacks the SLO line or the capacity mark", b.Chart.File)
			}
		}
	}
	want := []string{"capacity"}
	for _, m := range resultstest.CapacityMeshes {
		want = append(want, "capacity-curve-"+slug(m.Name))
	}
	if fmt.Sprint(charts) != fmt.Sprint(want) {
		t.Errorf("charts %v, want %s", charts, want)
	}
}

func TestCapacityMarkdownGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Build(loadCapacityFixture(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "capacity.md.golden", buf.Bytes())
}

// A search over connections reports a ceiling in connections, and no CPU
// per request or dollars per million requests, which a count of held
// connections does not give.
func TestCapacitySectionOverConnections(t *testing.T) {
	t.Parallel()
	d := loadCapacityFixture(t)
	for _, c := range d.Capacity {
		c.Over = results.OverConnections
	}
	s := capacitySection(t, Build(d))
	if s.Title != "Concurrent-connection ceiling at the SLO" {
		t.Errorf("title %q", s.Title)
	}
	caps := findTable(s, "Capacity (connections)")
	if caps == nil || len(caps.Rows) != 3 || caps.Rows[0][1] != num(resultstest.CapacityMeshes[0].Capacity) {
		t.Fatalf("ceiling table %+v", caps)
	}
	if findTable(s, "Component") != nil || findTable(s, "Capacity (req/s)") != nil {
		t.Error("a connection ceiling has a CPU per request or a cost table")
	}
	for _, b := range s.Blocks {
		if b.Table != nil && len(b.Table.Header) > 3 && b.Table.Header[2] == "Offered (req/s)" {
			t.Errorf("trials table offers req/s: %v", b.Table.Header)
		}
	}
}

// TestIntervalKinds: an interval shows its ends; a bound (a search cut
// short) and an older result's point (schema 16 stored a missing interval
// as ci_low = ci_high) show none, saying which, rather than "14872 to
// 14872".
func TestIntervalKinds(t *testing.T) {
	t.Parallel()
	old := &analysis.CapacityMesh{}
	old.RPS, old.CILow, old.CIHigh = 14872, 14872, 14872
	if got := intervalText(old); !strings.HasPrefix(got, "none (a result older than schema 17") {
		t.Errorf("an old point: %q, want no interval", got)
	}
	bound := &analysis.CapacityMesh{}
	bound.Kind, bound.RPS, bound.LowerBound = search.FormBound, 1200, true
	if got := intervalText(bound); !strings.HasPrefix(got, "none: a bound") || capacityNum(bound) != "≥ 1200" {
		t.Errorf("a bound: %q %q, want no interval and ≥ 1200", got, capacityNum(bound))
	}
	spread := &analysis.CapacityMesh{}
	spread.Kind, spread.RPS, spread.CILow, spread.CIHigh = search.FormInterval, 15000, 14000, 16000
	if got := intervalText(spread); got != "14000 to 16000" {
		t.Errorf("an interval: %q, want 14000 to 16000", got)
	}
}
