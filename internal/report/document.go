package report

import "strings"

// Document is a report as data; the HTML and Markdown renderers draw the
// same document, so the two never disagree.
type Document struct {
	Title    string `json:"title"`
	Subtitle string `json:"subtitle"`
	// Banner says, above everything else, what the platform emulates and
	// what the results do not hold.
	Banner []string `json:"banner,omitempty"`
	// Verdict is the verdict's figures as numbers, and its ranking
	// sentences, which the renderers put first; the verdict section's
	// table is drawn from it. Nil when the price table cannot be read.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Thresholds are the study's thresholds judged against the verdict,
	// one per threshold and mesh; the "thresholds" section shows them.
	Thresholds []ThresholdOutcome `json:"thresholds,omitempty"`
	Sections   []Section          `json:"sections"`
}

// Section is one top-level part of a report.
type Section struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Blocks []Block `json:"blocks"`
}

// Block is one element of a section; exactly one of its content fields is
// set.
type Block struct {
	Heading string   `json:"heading,omitempty"` // a sub-heading, or the summary line of a collapsed block
	Text    string   `json:"text,omitempty"`
	List    []string `json:"list,omitempty"`
	Table   *Table   `json:"table,omitempty"`
	Chart   *Chart   `json:"chart,omitempty"`
	Code    string   `json:"code,omitempty"`
	// Collapsed folds a table or code block behind its heading.
	Collapsed bool `json:"collapsed,omitempty"`
}

// Table is a table of pre-formatted cells; the first column is a label.
type Table struct {
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	Notes  []string   `json:"notes,omitempty"`
}

// Chart is one drawn chart; File names its SVG file under charts/.
type Chart struct {
	File    string `json:"file"`
	Title   string `json:"title"`
	Caption string `json:"caption,omitempty"`
	SVG     string `json:"-"`
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
