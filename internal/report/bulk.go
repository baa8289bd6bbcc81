package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
)

// bulkParam is the sweep parameter that pads every answer to its size in
// bytes.
const bulkParam = "payload"

// bulkParts are the proxies whose memory a transfer may swell, the data
// plane's sum last.
var bulkParts = []analysis.Part{
	analysis.RolePart(metrics.RoleSidecar), analysis.RolePart(metrics.RoleNodeProxy),
	analysis.RolePart(metrics.RoleWaypoint), analysis.RolePart(metrics.RoleIngress), analysis.PartDataPlane,
}

// bulk reads a sweep over the payload as bulk transfer: each mesh's
// throughput in Gbit/s beside the baseline's at the same payload and
// load, as a ratio, and the peak memory of each proxy role over the
// transfer.
func (b *builder) bulk() Section {
	s := Section{ID: "bulk", Title: "Bulk transfer"}
	d := b.d
	i := slices.IndexFunc(d.Params, func(p analysis.Param) bool { return p.Name == bulkParam })
	if i < 0 {
		return s
	}
	sizes := d.Params[i].Values
	s.Blocks = append(s.Blocks, text("Throughput of the answers at each payload (every answer padded to it): successful answers times the payload, in Gbit/s, and each mesh's over the baseline's at the same payload and load "+
		"(the ratio of medians, its interval from the bootstrapped difference). Peak memory is each proxy role's highest working set over the measured transfer, its components summed sample by sample. "+
		"Medians over repetitions, with 95% bootstrap intervals. "+
		"Resource usage per component plots each proxy's memory over time during the transfer of the representative configuration (the last: the largest payload, the most connections)."))
	for _, slice := range d.Slices(bulkParam) {
		t := &Table{Header: []string{"Mesh", "Payload (MB)", "Gbit/s", "Ratio to baseline", "Proxy", "Peak memory (MiB)", "Runs"}}
		for _, size := range sizes {
			c := slice.With(bulkParam, size)
			for _, m := range d.Meshes {
				g := d.Group(m, c)
				if g == nil || len(g.Values(analysis.Gbps)) == 0 {
					continue
				}
				ratio := "—"
				if base := d.Group(d.Baseline, c); base != nil && m != d.Baseline {
					ratio = ratioText(analysis.Difference(base.Values(analysis.Gbps), g.Values(analysis.Gbps)))
				}
				row := []string{m, megabytes(size), est(g.Estimate(analysis.Gbps), 1), ratio}
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
		label := "Throughput and proxy memory"
		if slice.Key != "" {
			label += ", " + slice.Label()
		}
		s.Blocks = append(s.Blocks, heading(label), table(t))
	}
	if len(s.Blocks) == 1 {
		return Section{ID: s.ID, Title: s.Title}
	}
	return s
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
	return fmt.Sprintf("%s [%s, %s]", r(d.Pct.Median), r(d.Pct.Lo), r(d.Pct.Hi))
}

// megabytes writes a payload in bytes as decimal megabytes.
func megabytes(bytes string) string {
	n, err := strconv.ParseFloat(bytes, 64)
	if err != nil {
		return bytes
	}
	return num(n / 1e6)
}
