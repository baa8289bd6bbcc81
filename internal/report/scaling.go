package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/results"
)

// scaling says how the load was fitted to the platform, as the runner
// did it: a calibrated run names the mesh whose capacity the load was
// scaled to and lists every mesh's measured capacity.
func scaling(sc *results.Scaling) []Block {
	if sc == nil || sc.Mode == "" || sc.Mode == "none" {
		return []Block{text("The load ran as the study specifies it, unscaled.")}
	}
	var parts []string
	switch {
	case sc.Mode == results.ScaleTenants:
		s := fmt.Sprintf("Scaled by tenants, not by rate: %s.", strings.TrimSuffix(sc.Note, "."))
		out := []Block{text(strings.ToUpper(s[:1]) + s[1:])}
		if t := capacities(sc); t != nil {
			out = append(out, table(t))
		}
		return out
	case sc.Mode == results.ScaleCalibrated && sc.Reference != "":
		parts = append(parts, fmt.Sprintf("Calibrated on the slowest mesh, %s (%s req/s): before the cells, a short closed-loop measurement found each mesh's capacity, "+
			"and the load was scaled to the slowest's so that every mesh ran below saturation", sc.Reference, num(sc.Capacities[sc.Reference])))
		if sc.PublishedRate > 0 {
			parts = append(parts, fmt.Sprintf("open-loop rates offered %s%% of it", num(100*sc.Fraction)))
		}
	case sc.Mode == results.ScaleCalibrated:
		// Results from before the runner calibrated on the slowest mesh
		// record the baseline's capacity only.
		parts = append(parts, fmt.Sprintf("Calibrated: the baseline's capacity was measured at %s req/s and the load set to %s%% of it",
			num(sc.BaselineCapacity), num(100*sc.Fraction)))
	default:
		parts = append(parts, fmt.Sprintf("Scaled by a fixed factor (mode %q)", sc.Mode))
	}
	if sc.Rate > 0 {
		parts = append(parts, fmt.Sprintf("the lab's rate was %s req/s", num(sc.Rate)))
	}
	if sc.PublishedRate > 0 {
		parts = append(parts, fmt.Sprintf("the published rate %s req/s", num(sc.PublishedRate)))
	}
	parts = append(parts, fmt.Sprintf("factor %s of the published load", num(sc.Factor)))
	s := strings.Join(parts, "; ") + "."
	if note := strings.TrimSuffix(sc.Note, "."); note != "" {
		s += " " + strings.ToUpper(note[:1]) + note[1:] + "."
	}
	out := []Block{text(s)}
	if t := capacities(sc); t != nil {
		out = append(out, table(t))
	}
	if t := workTable(sc.Work); t != nil {
		out = append(out, table(t))
	}
	return out
}

// workTable shows how the app's cost was calibrated: per mesh, what its
// proxies cost relative to the app in the study, here with the configured
// work, and here with the calibrated work; nil when it was not.
func workTable(w *results.WorkCalibration) *Table {
	if w == nil {
		return nil
	}
	t := &Table{Header: []string{"Mesh", "Study: proxies' cost over the app's", "Here, configured work", "Here, calibrated work"}}
	for _, m := range slices.Sorted(maps.Keys(w.StudyShares)) {
		after := "—"
		if a, ok := w.SharesAfter[m]; ok {
			after = pct(a)
		}
		t.Rows = append(t.Rows, []string{m, pct(w.StudyShares[m]), pct(w.SharesBefore[m]), after})
	}
	var work []string
	for _, svc := range slices.Sorted(maps.Keys(w.WorkMs)) {
		work = append(work, fmt.Sprintf("%s %s ms", svc, num(w.WorkMs[svc])))
	}
	t.Notes = []string{fmt.Sprintf("The app's cost per request, calibrated: a share is capacity(baseline) / capacity(mesh) − 1 in closed loop at saturation, the study's from its published throughput. "+
		"With the configured work (%s ms per request) the app cost %s ms of CPU per request on the app node's %d CPU(s); every service's work was scaled by %s (%s) so that it costs about %s ms, "+
		"the geometric mean of what each mesh's share asks for.", num(w.ConfiguredMs), num(w.AppMsBefore), w.AppCPUs, num(w.Scale), strings.Join(work, ", "), num(w.TargetAppMs))}
	return t
}

func pct(x float64) string { return num(100*x) + "%" }

// capacities tabulates the calibration's measured capacities, fastest
// first, each relative to the reference's; nil when none was recorded.
func capacities(sc *results.Scaling) *Table {
	if len(sc.Capacities) == 0 {
		return nil
	}
	meshes := slices.SortedFunc(maps.Keys(sc.Capacities), func(a, b string) int {
		return cmp.Or(cmp.Compare(sc.Capacities[b], sc.Capacities[a]), cmp.Compare(a, b))
	})
	ref := sc.Capacities[sc.Reference]
	t := &Table{Header: []string{"Mesh", "Capacity (req/s)", "Relative to the reference"}}
	for _, m := range meshes {
		name, rel := m, "—"
		if m == sc.Reference {
			name += " (reference)"
		}
		if ref > 0 {
			rel = num(sc.Capacities[m]/ref) + "×"
		}
		t.Rows = append(t.Rows, []string{name, num(sc.Capacities[m]), rel})
	}
	t.Notes = []string{"Closed-loop capacity measured before the cells, on the first workload shape: requests answered without error per second."}
	return t
}
