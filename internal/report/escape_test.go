package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestMarkdownEscapesStudyText puts HTML and Markdown into the texts a
// study file or results carry into the report (the study's name, a
// published figure's source, a failed cell's reason, the scaling note):
// report.md shows each it shows (all but the note) as text, escaped, in
// its place.
func TestMarkdownEscapesStudyText(t *testing.T) {
	t.Parallel()
	// Each text is tagged with where it goes, so that each is found
	// escaped in its own place.
	evil := func(tag string) string {
		return tag + " <img src=x onerror=alert(1)> [click](javascript:alert(2)) **bold** `code` _em_ ~strike~ a|b"
	}
	escaped := func(tag string) string {
		return tag + ` &lt;img src=x onerror=alert(1)> [click]\(javascript:alert(2)) \*\*bold\*\* \` + "`code\\`" + ` \_em\_ \~strike\~ a\|b`
	}
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ix.Study = evil("studyname")
	ix.Provenance.Published = []results.Published{{Metric: "p50", Mesh: resultstest.Sidecar, Value: 1, Source: evil("publishedsource")}}
	ix.Provenance.Scaling = &results.Scaling{Mode: "factor", Factor: 1, Note: evil("scalingnote")}
	for i := range ix.Cells {
		if ix.Cells[i].Mesh == resultstest.Sidecar && i%2 == 0 {
			ix.Cells[i].Status, ix.Cells[i].Reason = results.StatusFailed, evil("failurereason")
		}
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Build(d)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// A code block shows its lines as they are, literally.
	var text []string
	inCode := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		} else if !inCode {
			text = append(text, line)
		}
	}
	for _, raw := range []string{"<img", "](javascript", "**bold**", "`code`", "_em_", "~strike~", "a|b"} {
		for _, line := range text {
			if strings.Contains(line, raw) {
				t.Errorf("report.md holds %q unescaped: %s", raw, line)
			}
		}
	}
	// The scaling note is set too, but this report does not show it.
	for _, tag := range []string{"studyname", "publishedsource", "failurereason"} {
		if !strings.Contains(md, escaped(tag)) {
			t.Errorf("report.md does not show the %s escaped, as %q:\n%s", tag, escaped(tag), md)
		}
	}
}

// TestMarkdownCodeIsFenced: a code block (the study file) is fenced by
// more backticks than any run inside it, so that its text, a fence and
// HTML included, stays literal.
func TestMarkdownCodeIsFenced(t *testing.T) {
	t.Parallel()
	code := "name: x\n```\n<img src=x onerror=alert(1)>\n````\n"
	var b strings.Builder
	markdownCode(&b, code)
	want := "`````text\nname: x\n```\n<img src=x onerror=alert(1)>\n````\n`````\n"
	if b.String() != want {
		t.Errorf("markdownCode = %q, want %q", b.String(), want)
	}
}

func TestMdBlock(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"# heading":      `\# heading`,
		"  > quote":      `\> quote`,
		"- item":         `\- item`,
		"12. item":       `12\. item`,
		"[x]: http://a":  `\[x]\: http://a`,
		"p99 <= 10ms":    "p99 <= 10ms",
		"1.5 [1.2, 1.8]": "1.5 [1.2, 1.8]",
		"a\nb":           "a b",
	} {
		if got := mdBlock(in); got != want {
			t.Errorf("mdBlock(%q) = %q, want %q", in, got, want)
		}
	}
}
