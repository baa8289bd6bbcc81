package report

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	// Charts are drawn by package chart, which escapes every string it
	// puts into the SVG.
	"svg": func(s string) template.HTML { return template.HTML(s) },
	// A long figure may wrap; a short one stays on one line.
	"long": func(s string) bool { return len(s) > 28 },
}).Parse(htmlSource))

// WriteHTML renders the document as one self-contained HTML file: inline
// CSS and SVG, no script, and a content security policy that forbids any
// fetch, so that it opens offline exactly as it was written.
func WriteHTML(w io.Writer, doc *Document) error {
	return htmlTemplate.Execute(w, doc)
}
