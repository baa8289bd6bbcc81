package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

func renderHTML(t *testing.T) (string, *Document) {
	t.Helper()
	doc := Build(loadFixture(t))
	var buf bytes.Buffer
	if err := WriteHTML(&buf, doc); err != nil {
		t.Fatal(err)
	}
	return buf.String(), doc
}

// TestHTMLIsSelfContained checks statically what the Chromium test checks
// in a browser: nothing in the report can fetch anything.
func TestHTMLIsSelfContained(t *testing.T) {
	t.Parallel()
	html, doc := renderHTML(t)
	if !strings.Contains(html, `Content-Security-Policy" content="default-src 'none'`) {
		t.Error("no content security policy forbidding fetches")
	}
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	// The only URL allowed is the SVG namespace, which is a name, not a fetch.
	urls := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^"' <]*`).FindAllString(html, -1)
	for _, u := range urls {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("report refers to %q", u)
		}
	}
	if got, want := strings.Count(html, "<svg "), len(doc.Charts()); got != want || want < 10 {
		t.Errorf("%d inline SVGs for %d charts", got, want)
	}
	for _, s := range doc.Sections {
		if !strings.Contains(html, `<section id="`+s.ID+`">`) || !strings.Contains(html, `href="#`+s.ID+`"`) {
			t.Errorf("section %q is not in the report with its link", s.ID)
		}
	}
}

func TestReportSections(t *testing.T) {
	t.Parallel()
	_, doc := renderHTML(t)
	var ids []string
	for _, s := range doc.Sections {
		ids = append(ids, s.ID)
	}
	want := "verdict summary latency overhead latency-vs-load resources replicas replica-spread allocation cost not-measured excluded reproduce provenance glossary"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("sections %q, want %q", got, want)
	}
	files := map[string]bool{}
	for _, c := range doc.Charts() {
		if files[c.File] {
			t.Errorf("two charts write %s.svg", c.File)
		}
		files[c.File] = true
	}
}

// TestPercentilesOnlyWhereTheSampleHoldsThem renders a study whose cells
// measured 1,000 requests each (up to 6,000 pooled): every run holds a
// p99, shown, and none a p99.9, a dash with its footnote, in HTML and
// Markdown alike, however many the runs pool.
func TestPercentilesOnlyWhereTheSampleHoldsThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 4, Requests: 1000}); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := Build(d)
	var md, html bytes.Buffer
	if err := WriteMarkdown(&md, doc); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, doc); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, tooFewMark) || !strings.Contains(out, "p99.9 10,000") {
			t.Errorf("%s: no dash or footnote for p99.9 from too few requests", name)
		}
	}
	p99s := 0
	for _, s := range doc.Sections {
		if s.ID != "latency" {
			continue
		}
		for _, b := range s.Blocks {
			if b.Table == nil {
				continue
			}
			for _, row := range b.Table.Rows {
				// Service mesh, Time, QPS, p50, p90, p99, p99.9, ...: runs
				// of 1,000 requests hold p99, never p99.9.
				if row[6] != tooFewMark || row[3] == tooFewMark || row[5] == tooFewMark {
					t.Errorf("row %v: want p50 and p99 shown and p99.9 a dash", row)
				}
				p99s++
			}
		}
	}
	if p99s == 0 {
		t.Error("no latency rows")
	}
}
