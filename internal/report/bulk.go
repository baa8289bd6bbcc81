package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/report/chart"
	"github.com/meshbench/meshbench/internal/results"
)

// bulkParts are the proxies whose memory a transfer may swell, the data
// plane's sum last.
var bulkParts = []analysis.Part{
	analysis.RolePart(metrics.RoleSidecar), analysis.RolePart(metrics.RoleNodeProxy),
	analysis.RolePart(metrics.RoleWaypoint), analysis.RolePart(metrics.RoleIngress), analysis.PartDataPlane,
}

// transfer is what one configuration moves per exchange: a download (the
// answer padded to the payload) or an upload (the request's body).
type transfer struct {
	upload bool
	bytes  string // as the sweep recorded it
}

func (t transfer) direction() string {
	if t.upload {
		return "upload"
	}
	return "download"
}

// transferOf reads a configuration's transfer: its upload when it has
// one, else its payload; ok is false for a configuration with neither.
func transferOf(c analysis.LoadConfig) (transfer, bool) {
	if v, ok := c.Value(results.ParamUpload); ok && v > 0 {
		return transfer{upload: true, bytes: c.Params[results.ParamUpload]}, true
	}
	if v, ok := c.Value(results.ParamPayload); ok && v > 0 {
		return transfer{bytes: c.Params[results.ParamPayload]}, true
	}
	return transfer{}, false
}

// bulk reads sweeps over the payload (downloads) and the upload as bulk
// transfer: each mesh's throughput in Gbit/s beside the baseline's at the
// same transfer and load, as a ratio, the peak memory of each proxy role
// over the transfer, and each proxy role's memory over the largest
// transfer in each direction.
func (b *builder) bulk() Section {
	s := Section{ID: "bulk", Title: "Bulk transfer"}
	d := b.d
	bySlice := map[string][]analysis.LoadConfig{}
	var groups []analysis.LoadConfig
	for _, c := range d.Configs {
		if _, ok := transferOf(c); !ok {
			continue
		}
		rest := c.Without(results.ParamPayload).Without(results.ParamUpload)
		if _, seen := bySlice[rest.Key]; !seen {
			groups = append(groups, rest)
		}
		bySlice[rest.Key] = append(bySlice[rest.Key], c)
	}
	if len(groups) == 0 {
		return s
	}
	s.Blocks = append(s.Blocks, text("Throughput at each transfer: a download pads every answer to its size, an upload sends its size as every request's body (POST) and gets a small answer. "+
		"Gbit/s is the successful exchanges times the bytes each carried (the answer's payload plus the upload), and each mesh's over the baseline's at the same transfer and load "+
		"(the Hodges-Lehmann ratio of the two, paired by round, with its signed-rank interval). Peak memory is each proxy role's highest working set over the measured transfer, its components summed sample by sample. "+
		"Medians over the units, with their distribution-free 95% intervals (the level after an interval that cannot reach 95%). The charts after the tables plot each proxy role's memory over the largest transfer in each direction, one line per mesh."))
	floors := map[string]float64{}
	for _, slice := range groups {
		t := &Table{Header: []string{"Mesh", "Direction", "Size (MB)", "Gbit/s", "Ratio to baseline", "Proxy", "Peak memory (MiB)", "Runs"}}
		for _, c := range bySlice[slice.Key] {
			tr, _ := transferOf(c)
			for _, m := range d.Meshes {
				g := d.Group(m, c)
				if g == nil || len(g.Values(analysis.Gbps)) == 0 {
					continue
				}
				ratio := "—"
				if base := d.Group(d.Baseline, c); base != nil && m != d.Baseline {
					ratio = ratioText(analysis.Paired(base.Sample(analysis.Gbps), g.Sample(analysis.Gbps)))
					if least, ok := base.DistortedAtLeast(analysis.Gbps); ok && len(base.Values(analysis.Gbps)) == 0 && least > 0 {
						// The baseline's generator was the limit, so its
						// throughput is a floor and the ratio a ceiling.
						ratio = "≤ " + num(g.Estimate(analysis.Gbps).Median/least) + "x"
						floors[fmt.Sprintf("%s %s MB", tr.direction(), megabytes(tr.bytes))] = least
					}
				}
				row := []string{m, tr.direction(), megabytes(tr.bytes), est(g.Estimate(analysis.Gbps), 1), ratio}
				proxies := 0
				for _, p := range bulkParts {
					if !d.HasPart(m, p) {
						continue
					}
					scale, _ := unit(analysis.PeakMemory(p))
					t.Rows = append(t.Rows, append(slices.Clone(row), p.Label(), est(g.Estimate(analysis.PeakMemory(p)), scale), runs(g)))
					proxies++
				}
				if proxies == 0 {
					t.Rows = append(t.Rows, append(row, "none", "—", runs(g)))
				}
			}
		}
		if len(t.Rows) == 0 {
			continue
		}
		if len(floors) > 0 {
			var at []string
			for k, v := range floors {
				at = append(at, fmt.Sprintf("%s (at least %s Gbit/s)", k, num(v)))
			}
			slices.Sort(at)
			t.Notes = append(t.Notes, "≤: every baseline cell of "+strings.Join(at, ", ")+" was left out because its load generator, not the path, set the pace "+
				"(see Excluded cells); the path carries at least what those cells moved, so the ratio is at most the one shown.")
			clear(floors)
		}
		s.Blocks = append(s.Blocks, heading(sliced("Throughput and proxy memory", slice)), table(t))
	}
	if len(s.Blocks) == 1 {
		return Section{ID: s.ID, Title: s.Title}
	}
	for _, up := range []bool{false, true} {
		if c, ok := b.largestTransfer(up); ok {
			s.Blocks = append(s.Blocks, b.bulkMemoryCharts(c)...)
		}
	}
	return s
}

// largestTransfer is the configuration with the largest transfer in one
// direction, the last in the study's order among equals (the most
// connections, where they were swept).
func (b *builder) largestTransfer(upload bool) (analysis.LoadConfig, bool) {
	var best analysis.LoadConfig
	size, found := -1.0, false
	for _, c := range b.d.Configs {
		tr, ok := transferOf(c)
		if !ok || tr.upload != upload {
			continue
		}
		if v, _ := strconv.ParseFloat(tr.bytes, 64); v >= size {
			best, size, found = c, v, true
		}
	}
	return best, found
}

// bulkMemoryCharts plots, for each proxy role, its working set over the
// measured transfer at c under each mesh that has it: the run with the
// median p50 of each, from its stored samples.
func (b *builder) bulkMemoryCharts(c analysis.LoadConfig) []Block {
	tr, _ := transferOf(c)
	var out []Block
	for _, p := range bulkParts[:len(bulkParts)-1] {
		var series []chart.Series
		var reps []string
		for _, m := range b.d.Meshes {
			g := b.d.Group(m, c)
			if g == nil || g.Representative() == nil {
				continue
			}
			r := g.Representative()
			var pts []chart.Point
			for _, u := range r.Usage[p] {
				pts = append(pts, chart.Point{X: u.T, Y: u.Mem / (1 << 20)})
			}
			if len(pts) == 0 {
				continue
			}
			series = append(series, chart.Series{Name: m, Colour: b.colour[m], Points: pts})
			reps = append(reps, fmt.Sprintf("%s repetition %d", m, r.Summary.Repetition))
		}
		if len(series) == 0 {
			continue
		}
		role := p.Label()
		title := fmt.Sprintf("%s memory over a %s MB %s", strings.ToUpper(role[:1])+role[1:], megabytes(tr.bytes), tr.direction())
		out = append(out, chartBlock(&Chart{
			File: "bulk-memory-" + slug(role) + "-" + tr.direction(), Title: title,
			Caption: fmt.Sprintf("At %s; each line sums the role's containers, from the run with the median p50 (%s).", c.Label(), strings.Join(reps, ", ")),
			SVG: chart.Line{
				Title: title, X: chart.Axis{Label: "seconds into the measured phase"},
				Y: chart.Axis{Label: "working set (MiB)"}, Series: series,
			}.SVG(),
		}))
	}
	return out
}

// ratioText is a difference read as the ratio of the other's median to
// the base's, with the interval of its percentage.
func ratioText(d analysis.Diff) string {
	if !d.Pct.Valid() {
		return "—"
	}
	r := func(pct float64) string { return num(1+pct/100) + "x" }
	if !d.Pct.Interval() {
		return r(d.Pct.Median) + " (too few runs for an interval)"
	}
	return fmt.Sprintf("%s [%s, %s]%s", r(d.Pct.Median), r(d.Pct.Lo), r(d.Pct.Hi), levelText(d.Pct))
}

// megabytes writes a size in bytes as decimal megabytes.
func megabytes(bytes string) string {
	n, err := strconv.ParseFloat(bytes, 64)
	if err != nil {
		return bytes
	}
	return num(n / 1e6)
}
