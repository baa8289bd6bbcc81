package report

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
)

// writeUnevenResults writes the analysis fixture and, at the configuration
// priced, requests that tell the ways of counting pods apart: application
// pods that ask for 1500m / 3Gi, two of them in a second namespace, and one
// sidecar larger than the others.
func writeUnevenResults(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ix, err := resultstest.Write(dir, resultstest.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ix.Cells {
		if s.Params["connections"] != "128" || s.Params["replicas.productpage"] != "4" {
			continue // not the fixture's last configuration, the one both price
		}
		c, err := results.ReadCell(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Resources {
			comp := &c.Resources[i].Component
			if comp.Pod == "details-v1" || comp.Pod == "ratings-v1" {
				comp.Namespace = "ns-2"
			}
			switch {
			case comp.Role == metrics.RoleApp:
				comp.CPURequestMilli, comp.MemRequestBytes = 1500, 3*cost.GiB
			case comp.Role == metrics.RoleSidecar && comp.Pod == "reviews-v3":
				comp.CPURequestMilli, comp.MemRequestBytes = 1000, cost.GiB
			}
		}
		// An edit the index records, as a run writing these figures would.
		if err := results.WriteCell(dir, c); err != nil {
			t.Fatal(err)
		}
		ix.Cells[i].SHA256, ix.Cells[i].Bytes = c.SHA256, c.Bytes
	}
	if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCostMatchesCostCommand checks that the report's cost section and
// `meshbench cost --results` print the same figures for the same results
// directory: the same meshes in the same order, every figure equal to the
// precision the coarser of the two prints, and the same assumptions.
func TestCostMatchesCostCommand(t *testing.T) {
	t.Parallel()
	dir := writeUnevenResults(t)
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sec := (&builder{d: d}).cost()
	var tables []*Table
	var assumptions string
	for _, b := range sec.Blocks {
		if b.Table != nil {
			tables = append(tables, b.Table)
		}
		if b.Heading == "Assumptions" {
			assumptions = b.Code
		}
	}
	if len(tables) != 2 || assumptions == "" {
		t.Fatalf("cost section: %d tables and assumptions %q, want the allocation, its assumptions and the consumption", len(tables), assumptions)
	}

	var out bytes.Buffer
	if err := cost.Run(&out, cost.Options{ResultsDir: dir}); err != nil {
		t.Fatal(err)
	}
	cli := out.String()
	for _, l := range strings.Split(assumptions, "\n") {
		if !strings.Contains(cli, "\n  "+l+"\n") {
			t.Errorf("the command's assumptions lack the report's %q:\n%s", l, cli)
		}
	}
	for i, header := range []string{"NODES", "CPU"} {
		rows := textTable(t, cli, header, d.Meshes)
		report := tables[i].Rows
		if i == 1 {
			// The report leaves out meshes without a data plane; the command
			// prices them at zero.
			rows = rows[len(rows)-len(report):]
		}
		if len(rows) != len(report) {
			t.Fatalf("table %q: the command prints %d rows, the report %d", header, len(rows), len(report))
		}
		for j, r := range report {
			if rows[j][0] != r[0] || len(rows[j]) != len(r) {
				t.Fatalf("table %q, row %d: the command prints %q, the report %q", header, j, rows[j], r)
			}
			for k := 1; k < len(r); k++ {
				cmdFig := rows[j][k]
				if strings.HasSuffix(tables[i].Header[k], "(MiB)") {
					// The command prints GiB, the report MiB.
					gib, err := strconv.ParseFloat(cmdFig, 64)
					if err != nil {
						t.Fatalf("%s, %s: the command prints %q", r[0], tables[i].Header[k], cmdFig)
					}
					m, _, _ := parseEstimate(t, r[k])
					// Each side's rounding: the command's to a thousandth of
					// a GiB, the report's to whole MiB above 100.
					if math.Abs(gib*1024-m) > 0.0005*1024+0.5 {
						t.Errorf("%s, %s: the command prints %s GiB, the report %s MiB", r[0], tables[i].Header[k], cmdFig, r[k])
					}
					continue
				}
				if !sameFigure(cmdFig, r[k]) {
					t.Errorf("%s, %s: the command prints %s, the report %s", r[0], tables[i].Header[k], rows[j][k], r[k])
				}
			}
		}
	}
	// The uneven requests must show: the largest sidecar, or one
	// namespace's pods times two, would need other node counts.
	if !strings.Contains(assumptions, "1 / 1Gi on 1 application pod\n") || !strings.Contains(assumptions, "9 application pods") {
		t.Errorf("assumptions do not describe the pods as recorded:\n%s", assumptions)
	}
}

// textTable returns the rows, split into fields, of the command's table
// whose second column header starts with column: the lines under it that
// start with a mesh's name.
func textTable(t *testing.T, text, column string, meshes []string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 1 && f[0] == "MESH" && f[1] == column:
			in = true
		case in && len(f) > 0 && slices.Contains(meshes, f[0]):
			rows = append(rows, f)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("the command prints no table with a %s column:\n%s", column, text)
	}
	return rows
}

// sameFigure reports whether the command's and the report's printings can
// be of the same number: equal within half a unit of each one's last
// digit. Markers, currency and intervals are left aside; "-" and "—" both
// mean none.
func sameFigure(a, b string) bool {
	norm := func(s string) string {
		s = strings.Fields(s)[0] // the median before its interval, the count before "(or fewer)"
		s = strings.NewReplacer("$", "", ",", "", "%", "", "+", "", "*", "", "—", "-").Replace(s)
		return s
	}
	a, b = norm(a), norm(b)
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		return a == b
	}
	half := func(s string) float64 {
		_, frac, _ := strings.Cut(s, ".")
		return 0.5 * math.Pow(10, -float64(len(frac)))
	}
	return math.Abs(x-y) <= half(a)+half(b)+1e-12
}
