package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
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
	want := "summary latency overhead latency-vs-load resources replicas replica-spread allocation cost excluded provenance"
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
