package cost

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Write writes the estimate as text: the cells priced, the consumption
// table and the allocation with its assumptions; or, when format is
// "json", as one object.
func (e *ResultsEstimate) Write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Study %s (%s) at %s: the last configuration in sweep order\n\n", e.Study, e.Dir, e.ConfigLabel)
	cells := [][]string{{"MESH", "USABLE CELLS", "SKIPPED", "MEDIAN RPS"}}
	for _, m := range e.Meshes {
		cells = append(cells, []string{m.Mesh, strconv.Itoa(m.Usable), strconv.Itoa(m.Skipped), fmt.Sprintf("%.1f", m.RequestRate)})
	}
	table(&b, cells)
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, "skipped %s (%s): %s: %s\n", s.ID, s.Mesh, s.Kind, s.Reason)
	}
	fmt.Fprintf(&b, "Study-wide, %d of %d cells are skipped (failed, distorted or unusable); other configurations are not priced.\n\n",
		e.StudySkipped, e.StudyCells)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := e.Consumption.Write(w, "text"); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "Per mesh, each figure is the median over its usable cells of that cell's: the data plane's mean usage over the measured window, its price, and its CPU over the completed requests a second.\n\n"); err != nil {
		return err
	}
	if e.Allocation == nil {
		_, err := io.WriteString(w, "Not priced by requests: the results hold no application pods.\n")
		return err
	}
	return e.Allocation.Write(w, "text")
}
