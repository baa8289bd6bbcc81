package report

import (
	"strings"
	"testing"
	"time"
)

// TestBulkSection writes downloads and uploads whose throughput is known:
// 1,000 exchanges in 10 s are 100 a second, 0.8 Gbit/s of 1 MB answers
// and 8 Gbit/s of 10 MB ones, the same under both meshes; a 10 MB upload
// with a 1,000-byte answer is 8.0008 Gbit/s. The sidecar's memory climbs
// to 40 MiB at 1 MB, 400 MiB at the 10 MB download and 300 MiB at the
// 10 MB upload. The section tabulates each direction, and plots the
// sidecar's memory over the largest transfer of each from the samples.
func TestBulkSection(t *testing.T) {
	d := writeCells(t, "", map[string]map[string]sweepCell{
		"baseline": {
			"payload=1000000":              {p50: 10 * time.Millisecond},
			"payload=10000000":             {p50: 50 * time.Millisecond},
			"payload=1000,upload=10000000": {p50: 50 * time.Millisecond},
		},
		"sidecar": {
			"payload=1000000":              {p50: 12 * time.Millisecond, sidecar: 0.2, memMiB: 40},
			"payload=10000000":             {p50: 60 * time.Millisecond, sidecar: 0.5, memMiB: 400},
			"payload=1000,upload=10000000": {p50: 60 * time.Millisecond, sidecar: 0.5, memMiB: 300},
		},
	}, nil, nil)
	tables := sectionTables(t, d, "bulk")
	if len(tables) != 1 {
		t.Fatalf("%d tables, want one", len(tables))
	}
	small := tableRow(t, tables[0], "sidecar", "download", "1.00")
	if !strings.HasPrefix(small[3], "0.800 ") || !strings.HasPrefix(small[4], "1.00x") || small[5] != "sidecar" || !strings.HasPrefix(small[6], "40.0 ") {
		t.Errorf("sidecar at a 1 MB download %q: want 0.800 Gbit/s, 1.00x the baseline, sidecar peak 40 MiB", small)
	}
	big := tableRow(t, tables[0], "sidecar", "download", "10.0")
	if !strings.HasPrefix(big[3], "8.00 ") || !strings.HasPrefix(big[6], "400 ") {
		t.Errorf("sidecar at a 10 MB download %q: want 8.00 Gbit/s, sidecar peak 400 MiB", big)
	}
	up := tableRow(t, tables[0], "sidecar", "upload", "10.0")
	if !strings.HasPrefix(up[3], "8.00 ") || !strings.HasPrefix(up[4], "1.00x") || !strings.HasPrefix(up[6], "300 ") {
		t.Errorf("sidecar at a 10 MB upload %q: want 8.00 Gbit/s, 1.00x, sidecar peak 300 MiB", up)
	}
	if base := tableRow(t, tables[0], "baseline", "download", "10.0"); base[4] != "—" || base[5] != "none" {
		t.Errorf("baseline at a 10 MB download %q: want no ratio and no proxy", base)
	}
	var charts []*Chart
	for _, s := range Build(d).Sections {
		for _, b := range s.Blocks {
			if s.ID == "bulk" && b.Chart != nil {
				charts = append(charts, b.Chart)
			}
		}
	}
	want := map[string]string{"Sidecar memory over a 10.0 MB download": "400", "Sidecar memory over a 10.0 MB upload": "300"}
	for _, c := range charts {
		top, ok := want[c.Title]
		if !ok {
			continue
		}
		delete(want, c.Title)
		if !strings.Contains(c.SVG, "sidecar") || !strings.Contains(c.SVG, top) {
			t.Errorf("%s: the chart has no sidecar line reaching %s MiB", c.Title, top)
		}
	}
	if len(want) > 0 {
		titles := []string{}
		for _, c := range charts {
			titles = append(titles, c.Title)
		}
		t.Errorf("no chart %v among %q", want, titles)
	}
}

// TestBulkRatioOverGeneratorBoundBaseline: every baseline cell of a 100 MB
// upload was left out because its generator set the pace (as a sender on
// a veth does on the lab). The baseline moved at least what those cells
// did, so the sidecar's ratio is a ceiling, marked "≤" and explained,
// not left blank; the 10 MB upload, with a usable baseline, keeps its
// interval.
func TestBulkRatioOverGeneratorBoundBaseline(t *testing.T) {
	d := writeCells(t, "", map[string]map[string]sweepCell{
		"baseline": {
			"payload=1000,upload=10000000":  {p50: 50 * time.Millisecond},
			"payload=1000,upload=100000000": {p50: 500 * time.Millisecond, distorted: true},
		},
		"sidecar": {
			"payload=1000,upload=10000000":  {p50: 60 * time.Millisecond, sidecar: 0.5, memMiB: 300},
			"payload=1000,upload=100000000": {p50: 600 * time.Millisecond, sidecar: 0.5, memMiB: 300},
		},
	}, nil, nil)
	tables := sectionTables(t, d, "bulk")
	if len(tables) != 1 {
		t.Fatalf("%d tables, want one", len(tables))
	}
	if row := tableRow(t, tables[0], "sidecar", "upload", "100"); row[4] != "≤ 1.00x" {
		t.Errorf("sidecar at a 100 MB upload over a generator-bound baseline: ratio %q, want ≤ 1.00x", row[4])
	}
	if row := tableRow(t, tables[0], "sidecar", "upload", "10.0"); !strings.HasPrefix(row[4], "1.00x [") {
		t.Errorf("sidecar at a 10 MB upload: ratio %q, want 1.00x with an interval", row[4])
	}
	notes := strings.Join(tables[0].Notes, "\n")
	if !strings.Contains(notes, "upload 100 MB (at least 80.0 Gbit/s)") || strings.Contains(notes, "upload 10.0 MB") {
		t.Errorf("notes %q: want the 100 MB upload's floor named, and only it", notes)
	}
}
