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
	fmt.Fprintf(&b, "# %s\n\n_%s_\n\n", mdLine(doc.Title), mdLine(doc.Subtitle))
	if doc.Verdict != nil && len(doc.Verdict.Ranking) > 0 {
		for i, l := range doc.Verdict.Ranking {
			fmt.Fprintf(&b, "%d. **%s**\n", i+1, mdLine(l))
		}
		b.WriteString("\n")
	}
	for _, l := range doc.Banner {
		fmt.Fprintf(&b, "> %s\n>\n", mdLine(l))
	}
	if len(doc.Banner) > 0 {
		b.WriteString("\n")
	}
	// The table of contents follows the verdict, so that the decision
	// comes first.
	for i, s := range doc.Sections {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "<a id=\"%s\"></a>\n\n## %s\n", s.ID, mdLine(s.Title))
		for _, bl := range s.Blocks {
			b.WriteString("\n")
			markdownBlock(&b, bl)
		}
		if i == 0 {
			b.WriteString("\n")
			for _, s := range doc.Sections {
				fmt.Fprintf(&b, "- [%s](#%s)\n", mdLine(s.Title), s.ID)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func markdownBlock(b *strings.Builder, bl Block) {
	switch {
	case bl.Collapsed:
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", mdLine(bl.Heading))
		if bl.Table != nil {
			markdownTable(b, bl.Table)
		} else {
			markdownCode(b, bl.Code)
		}
		b.WriteString("\n</details>\n")
	case bl.Table != nil:
		markdownTable(b, bl.Table)
	case bl.Chart != nil:
		fmt.Fprintf(b, "![%s](%s/%s.svg)\n", mdLine(bl.Chart.Title), ChartDir, bl.Chart.File)
		if bl.Chart.Caption != "" {
			fmt.Fprintf(b, "\n_%s_\n", mdLine(bl.Chart.Caption))
		}
	case bl.List != nil:
		for _, item := range bl.List {
			fmt.Fprintf(b, "- %s\n", mdBlock(item))
		}
	case bl.Code != "":
		markdownCode(b, bl.Code)
	case bl.Heading != "":
		fmt.Fprintf(b, "### %s\n", mdLine(bl.Heading))
	default:
		fmt.Fprintf(b, "%s\n", mdBlock(bl.Text))
	}
}

func markdownTable(b *strings.Builder, t *Table) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			fmt.Fprintf(b, " %s |", mdLine(c))
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
		fmt.Fprintf(b, "\n%s\n", mdBlock(n))
	}
}

func markdownCode(b *strings.Builder, code string) {
	fence := "```"
	for strings.Contains(code, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%stext\n%s\n%s\n", fence, strings.TrimRight(code, "\n"), fence)
}

// mdLine makes text literal in Markdown, on one line, so that text from
// a study file or from results (titles, study text, published sources,
// mesh names, failure reasons) can neither format the report nor put HTML
// in it: an <img onerror=...> shows as text. The document holds no
// Markdown of its own: everything but a code block is text. Characters
// that mark emphasis, code or table cells are backslash-escaped, a "<"
// that could open a tag, a comment or an autolink is an entity, and a "]"
// that could close a link, an image or a link definition has what follows
// it escaped; a line break becomes a space. Other punctuation (a lone
// bracket, "<=") stays as it is, so that figures read plainly.
func mdLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == '\\' || c == '`' || c == '*' || c == '_' || c == '~' || c == '|':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '<' && (isASCIILetter(next) || next == '/' || next == '!' || next == '?'):
			b.WriteString("&lt;")
		case c == ']' && (next == '(' || next == '[' || next == ':'):
			b.WriteString("]\\")
		case c == '\n' || c == '\r':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mdBlock is mdLine for text that starts a line, whose first character
// must not start a heading, a quote, a list, a thematic break or a link
// definition.
func mdBlock(s string) string {
	s = mdLine(strings.TrimLeft(s, " \t"))
	if s == "" {
		return s
	}
	if strings.IndexByte("#>-+=[", s[0]) >= 0 {
		return "\\" + s
	}
	digits := strings.TrimLeft(s, "0123456789")
	if len(digits) < len(s) && (strings.HasPrefix(digits, ".") || strings.HasPrefix(digits, ")")) && (len(digits) == 1 || digits[1] == ' ') {
		return s[:len(s)-len(digits)] + "\\" + digits
	}
	return s
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
