package report

import (
	"strconv"

	"github.com/meshbench/meshbench/internal/analysis"
)

// excluded lists every cell left out of the figures and why: distorted
// load, failed verification, or no usable data.
func (b *builder) excluded() Section {
	s := Section{ID: "excluded", Title: "Excluded cells"}
	if len(b.d.Excluded) == 0 {
		s.Blocks = append(s.Blocks, text("No cell was excluded: every cell ran, passed verification and kept its load generator within bounds."))
		return s
	}
	s.Blocks = append(s.Blocks, text("These cells are shown for the record and left out of every table, chart and comparison above."))
	t := &Table{Header: []string{"Cell", "Mesh", "Configuration", "Repetition", "Status", "Reason"}}
	for _, e := range b.d.Excluded {
		t.Rows = append(t.Rows, []string{e.Summary.ID, e.Summary.Mesh, configOf(e).Label(),
			strconv.Itoa(e.Summary.Repetition), e.Kind, e.Reason})
	}
	s.Blocks = append(s.Blocks, table(t))
	return s
}

func configOf(e analysis.Exclusion) analysis.LoadConfig {
	var c analysis.LoadConfig
	for k, v := range e.Summary.Params {
		c = c.With(k, v)
	}
	return c
}
