package report

import "strings"

// Document is a report as data; the HTML and Markdown renderers draw the
// same document, so the two never disagree.
type Document struct {
	Title    string
	Subtitle string
	// Banner says, above everything else, what the platform emulates and
	// what the results do not hold.
	Banner   []string
	Sections []Section
}

// Section is one top-level part of a report.
type Section struct {
	ID     string
	Title  string
	Blocks []Block
}

// Block is one element of a section; exactly one of its content fields is
// set.
type Block struct {
	Heading string // a sub-heading, or the summary line of a collapsed block
	Text    string
	List    []string
	Table   *Table
	Chart   *Chart
	Code    string
	// Collapsed folds a table or code block behind its heading.
	Collapsed bool
}

// Table is a table of pre-formatted cells; the first column is a label.
type Table struct {
	Header []string
	Rows   [][]string
	Notes  []string
}

// Chart is one drawn chart; File names its SVG file under charts/.
type Chart struct {
	File    string
	Title   string
	Caption string
	SVG     string
}

func text(s string) Block             { return Block{Text: s} }
func heading(s string) Block          { return Block{Heading: s} }
func table(t *Table) Block            { return Block{Table: t} }
func chartBlock(c *Chart) Block       { return Block{Chart: c} }
func folded(h string, t *Table) Block { return Block{Heading: h, Table: t, Collapsed: true} }

// Charts returns every chart in the document, in order.
func (d *Document) Charts() []*Chart {
	var out []*Chart
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Chart != nil {
				out = append(out, b.Chart)
			}
		}
	}
	return out
}

// Numeric reports, per column, whether every filled cell below the header
// holds a figure, so that renderers can right-align it. The first column
// is a label.
func (t *Table) Numeric() []bool {
	out := make([]bool, len(t.Header))
	for i := 1; i < len(out); i++ {
		out[i] = true
		for _, r := range t.Rows {
			if i < len(r) && !looksNumeric(r[i]) {
				out[i] = false
				break
			}
		}
	}
	return out
}

func looksNumeric(s string) bool {
	if s == "" || s == "—" || s == "n/a" {
		return true
	}
	if strings.HasPrefix(s, "≥ ") || strings.HasPrefix(s, "≤ ") || strings.HasPrefix(s, "$") {
		s = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(s, "≥ "), "≤ "), "$")
	}
	if s == "" {
		return false
	}
	c := s[0]
	return (c >= '0' && c <= '9') || c == '+' || c == '-'
}
