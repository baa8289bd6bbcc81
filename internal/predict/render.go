package predict

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
)

// Output formats.
const (
	OutputText = "text"
	OutputJSON = "json"
	OutputHTML = "html"
)

// Write writes the prediction as a table, JSON or an HTML section.
func (p *Prediction) Write(w io.Writer, format string) error {
	switch format {
	case OutputJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case OutputHTML:
		return htmlTmpl.Execute(w, p.table())
	}
	return p.writeText(w)
}

// table is the prediction as the rows both the text and the HTML show.
type table struct {
	Title  string
	Lines  []string
	Header []string
	Rows   [][]string
	Roles  [][]string
	Notes  []string
}

func (p *Prediction) table() table {
	t := table{
		Title: fmt.Sprintf("Predicted mesh cost: %s, %d namespaces at %g req/s each", p.Graph, p.Scale.Namespaces, p.Scale.Rate),
		Lines: []string{
			"Profile: " + p.Profile + " (" + p.Host + ")",
			"Validated: " + p.Validated,
			fmt.Sprintf("Cost model: %s nodes; consumption at %s", p.Machine, p.Prices),
		},
		Header: []string{"Mesh", "Added p50 ms", "Added p95 ms", "Added p99 ms", "Proxy CPU cores", "Proxy memory MiB", "Nodes", "Nodes $/month", "Consumed $/month"},
		Notes:  p.Notes,
	}
	for _, m := range p.Meshes {
		t.Rows = append(t.Rows, []string{m.Mesh, iv(m.P50, 2), iv(m.P95, 2), iv(m.P99, 2), iv(m.Cores, 3), iv(m.Mem.Times(1.0/(1<<20)), 0),
			fmt.Sprint(m.Nodes), fmt.Sprintf("%.0f", m.NodesMonthly), iv(m.ConsumedMonthly, 0)})
		for _, r := range m.Roles {
			at := fmt.Sprintf("%.3g", r.ReadAt)
			if r.ReadLow > 0 && r.ReadLow != r.ReadAt {
				at = fmt.Sprintf("%.3g to %.3g", r.ReadLow, r.ReadAt)
			}
			t.Roles = append(t.Roles, []string{m.Mesh, r.Role, fmt.Sprint(r.Instances), at, iv(r.Cores, 3), iv(r.MemBytes.Times(1.0/(1<<20)), 0)})
		}
	}
	return t
}

// iv writes a value with its interval.
func iv(v Interval, prec int) string {
	f := "%." + fmt.Sprint(prec) + "f"
	return fmt.Sprintf(f+" ["+f+", "+f+"]", v.V, v.Lo, v.Hi)
}

func (p *Prediction) writeText(w io.Writer) error {
	t := p.table()
	var b strings.Builder
	b.WriteString(t.Title + "\n")
	for _, l := range t.Lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	fmt.Fprintln(tw, "\nMesh\tComponent\tInstances\tRead at req/s\tCPU cores\tMemory MiB")
	for _, r := range t.Roles {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, n := range t.Notes {
		b.WriteString("- " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// htmlTmpl is a section in the report's markup (a section, tables with
// numeric cells classed num), for pasting into a report or viewing alone.
var htmlTmpl = template.Must(template.New("predict").Parse(`<section id="prediction">
<h2>{{.Title}}</h2>
{{range .Lines}}<p>{{.}}</p>
{{end}}<table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<table>
<thead><tr><th>Mesh</th><th>Component</th><th>Instances</th><th>Read at req/s</th><th>CPU cores</th><th>Memory MiB</th></tr></thead>
<tbody>{{range .Roles}}<tr>{{range $i, $c := .}}<td{{if gt $i 1}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
</section>
`))
