package report

import (
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
)

func TestReleaseVerdict(t *testing.T) {
	t.Parallel()
	p := analysis.ReleasePair{Older: "sidecar-1-38-3", Newer: "sidecar-1-40-0", OlderRelease: "1.38.3", NewerRelease: "1.40.0"}
	est := func(m, lo, hi float64) analysis.Estimate {
		return analysis.Estimate{Median: m, Lo: lo, Hi: hi, N: 7, Level: 1 - 6.0/128}
	}
	tests := []struct {
		name    string
		changes []analysis.Change
		want    string
	}{
		{
			name: "slower and costlier",
			changes: []analysis.Change{
				{Metric: analysis.P50, Diff: analysis.Diff{Delta: est(0.2, 0.1, 0.3), Pct: est(10, 5, 15)}, Regression: true},
				{Metric: analysis.CPUPerRequest, Diff: analysis.Diff{Delta: est(3, 1, 5), Pct: est(8, 2, 14)}, Regression: true},
			},
			want: "1.40.0 against 1.38.3: p50 +0.200 ms [+0.100, +0.300], CPU per request +8.00% [+2.00, +14.0]. Regression gate: 1.40.0 regressed on p50, data plane CPU per request (µs).",
		},
		{
			name: "intervals include zero",
			changes: []analysis.Change{
				{Metric: analysis.P50, Diff: analysis.Diff{Delta: est(0.02, -0.1, 0.1), Pct: est(1, -5, 5)}},
				{Metric: analysis.CPUPerRequest, Diff: analysis.Diff{Delta: est(-1, -3, 2), Pct: est(-2, -6, 4)}},
			},
			want: "1.40.0 against 1.38.3: no measurable difference (p50 +0.020 ms [-0.100, +0.100], CPU per request -2.00% [-6.00, +4.00]). Regression gate: no regression.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := releaseVerdict(p, tt.changes); got != tt.want {
				t.Errorf("verdict\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

// TestVerdictNamesReleases writes a regression study's results, the
// sidecar profile under two Envoy releases, whose figures are known: the
// newer release's p50 is 3 ms against 2 ms and its sidecar burns 0.2 cores
// against 0.1 at the same rate. The report's verdict must name both
// releases and give the differences with their intervals, as the Proxy
// releases section does.
func TestVerdictNamesReleases(t *testing.T) {
	t.Parallel()
	d := writeCells(t, "", map[string]map[string]sweepCell{
		"sidecar-1-38-3": {"": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 60}},
		"sidecar-pinned": {"": {p50: 3 * time.Millisecond, sidecar: 0.2, memMiB: 60}},
	}, map[string]mesh.MeshSpec{
		"sidecar-1-38-3": {Profile: "sidecar", ProxyVersion: "1.38.3"},
		"sidecar-pinned": {Profile: "sidecar", ProxyVersion: "1.40.0"},
	}, nil)
	var verdict, releases string
	doc := Build(d)
	// No baseline mesh: the added-latency columns are not measured (a
	// dash), not short of requests, and the older release's sentence
	// points at the releases line.
	for _, vm := range doc.Verdict.Meshes {
		if vm.AddedP50 != nil || vm.AddedP99 != nil {
			t.Errorf("%s: added latency %+v, %+v with no baseline mesh; want none", vm.Mesh, vm.AddedP50, vm.AddedP99)
		}
		if vm.Sentence != "the reference the others are measured against." && !strings.HasSuffix(vm.Sentence, "in the proxy releases line above.") {
			t.Errorf("%s: verdict sentence %q", vm.Mesh, vm.Sentence)
		}
	}
	for _, row := range sectionTables(t, d, "verdict")[0].Rows {
		if row[1] != "—" || row[2] != "—" {
			t.Errorf("%s: added latency %q, %q with no baseline mesh; want dashes", row[0], row[1], row[2])
		}
	}
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			switch {
			case s.ID == "verdict" && b.Text != "":
				verdict += b.Text + "\n"
			case s.ID == "releases" && b.Text != "":
				releases += b.Text + "\n"
			}
		}
	}
	want := "Proxy releases, 1.40.0 against 1.38.3: p50 +1.00 ms [+1.00, +1.00], p99 +1.00 ms [+1.00, +1.00], CPU per request +100% [+100, +100]. " +
		"Regression gate: 1.40.0 regressed on p50, p99, data plane CPU per request (µs)."
	if !strings.Contains(verdict, want) {
		t.Errorf("the verdict lacks the releases' difference\n got: %s\nwant: %s", verdict, want)
	}
	if !strings.Contains(releases, strings.TrimPrefix(want, "Proxy releases, ")) {
		t.Errorf("the Proxy releases section differs from the verdict:\n%s", releases)
	}
}

// TestReleaseLinesNameTheProfile: with two profiles each under two
// releases, every release line says whose releases it compares, and each
// profile's pair appears once.
func TestReleaseLinesNameTheProfile(t *testing.T) {
	t.Parallel()
	d := writeCells(t, "", map[string]map[string]sweepCell{
		"sidecar-1-38-3":  {"": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 60}},
		"sidecar-1-40-0":  {"": {p50: 3 * time.Millisecond, sidecar: 0.2, memMiB: 60}},
		"waypoint-1-38-3": {"": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 60}},
		"waypoint-1-40-0": {"": {p50: 2 * time.Millisecond, sidecar: 0.1, memMiB: 60}},
	}, map[string]mesh.MeshSpec{
		"sidecar-1-38-3":  {Profile: "sidecar", ProxyVersion: "1.38.3"},
		"sidecar-1-40-0":  {Profile: "sidecar", ProxyVersion: "1.40.0"},
		"waypoint-1-38-3": {Profile: "ambient-waypoint", ProxyVersion: "1.38.3"},
		"waypoint-1-40-0": {Profile: "ambient-waypoint", ProxyVersion: "1.40.0"},
	}, nil)
	var lines []string
	for _, s := range Build(d).Sections {
		for _, b := range s.Blocks {
			if s.ID == "verdict" && strings.HasPrefix(b.Text, "Proxy releases") {
				lines = append(lines, b.Text)
			}
		}
	}
	for _, want := range []string{"Proxy releases, sidecar 1.40.0 against 1.38.3: ", "Proxy releases, ambient-waypoint 1.40.0 against 1.38.3: "} {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d verdict lines begin %q, want 1:\n%s", n, want, strings.Join(lines, "\n"))
		}
	}
	if len(lines) != 2 {
		t.Errorf("%d release lines, want 2:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}
