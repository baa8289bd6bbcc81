package report

import (
	"fmt"
	"io"
	"strings"
)

// ChartDir is the directory, beside report.md, that holds the charts.
const ChartDir = "charts"

// WriteMarkdown renders the document as Markdown; charts are linked from
// ChartDir as SVG files, which the caller writes.
func WriteMarkdown(w io.Writer, doc *Document) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n_%s_\n\n", doc.Title, doc.Subtitle)
	for _, s := range doc.Sections {
		fmt.Fprintf(&b, "- [%s](#%s)\n", s.Title, s.ID)
	}
	for _, s := range doc.Sections {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n\n## %s\n", s.ID, s.Title)
		for _, bl := range s.Blocks {
			b.WriteString("\n")
			markdownBlock(&b, bl)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func markdownBlock(b *strings.Builder, bl Block) {
	switch {
	case bl.Collapsed:
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", htmlEscape(bl.Heading))
		if bl.Table != nil {
			markdownTable(b, bl.Table)
		} else {
			markdownCode(b, bl.Code)
		}
		b.WriteString("\n</details>\n")
	case bl.Table != nil:
		markdownTable(b, bl.Table)
	case bl.Chart != nil:
		fmt.Fprintf(b, "![%s](%s/%s.svg)\n", bl.Chart.Title, ChartDir, bl.Chart.File)
		if bl.Chart.Caption != "" {
			fmt.Fprintf(b, "\n_%s_\n", bl.Chart.Caption)
		}
	case bl.List != nil:
		for _, item := range bl.List {
			fmt.Fprintf(b, "- %s\n", item)
		}
	case bl.Code != "":
		markdownCode(b, bl.Code)
	case bl.Heading != "":
		fmt.Fprintf(b, "### %s\n", bl.Heading)
	default:
		fmt.Fprintf(b, "%s\n", bl.Text)
	}
}

func markdownTable(b *strings.Builder, t *Table) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(b, " %s |", mdCell(c))
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for _, num := range t.Numeric() {
		if num {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(b, "\n%s\n", n)
	}
}

func markdownCode(b *strings.Builder, code string) {
	fence := "```"
	for strings.Contains(code, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%stext\n%s\n%s\n", fence, strings.TrimRight(code, "\n"), fence)
}

var mdCellEscaper = strings.NewReplacer("|", `\|`, "\n", " ")

func mdCell(s string) string { return mdCellEscaper.Replace(s) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscape(s string) string { return htmlEscaper.Replace(s) }
