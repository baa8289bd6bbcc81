package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// TestMarkdownEscapesStudyText puts HTML and Markdown into every text a
// study file or results carry into the report (the study's name, a
// published figure's source, a mesh's name, a failed cell's reason, the
// scaling note): report.md shows each as text.
func TestMarkdownEscapesStudyText(t *testing.T) {
	t.Parallel()
	const evil = "<img src=x onerror=alert(1)> [click](javascript:alert(2)) **bold** `code`"
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ix.Study = "study " + evil
	ix.Provenance.Published = []results.Published{{Metric: "p50", Mesh: resultstest.Sidecar, Value: 1, Source: evil}}
	ix.Provenance.Scaling = &results.Scaling{Mode: "factor", Factor: 1, Note: evil}
	for i := range ix.Cells {
		if ix.Cells[i].Mesh == resultstest.Sidecar && i%2 == 0 {
			ix.Cells[i].Status, ix.Cells[i].Reason = results.StatusFailed, evil
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
	for _, raw := range []string{"<img", "](javascript", "**bold**", "`code`"} {
		for _, line := range text {
			if strings.Contains(line, raw) {
				t.Errorf("report.md holds %q unescaped: %s", raw, line)
			}
		}
	}
	escaped := `&lt;img src=x onerror=alert(1)> [click]\(javascript:alert(2)) \*\*bold\*\* \` + "`code\\`"
	if n := strings.Count(md, escaped); n < 3 {
		t.Errorf("report.md shows the text escaped %d times, want the name, the source, the note and the reason:\n%s", n, md)
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
