package report

import (
	"strings"
	"testing"
	"time"
)

// TestBulkSection writes a payload sweep whose throughput is known: 1,000
// answers in 10 s are 100 a second, 0.8 Gbit/s of 1 MB answers and 8
// Gbit/s of 10 MB ones, the same under both meshes; the sidecar's memory
// climbs to 40 MiB at 1 MB and 400 MiB at 10 MB.
func TestBulkSection(t *testing.T) {
	d := writeSweep(t, "payload", map[string]map[string]sweepCell{
		"baseline": {"1000000": {p50: 10 * time.Millisecond}, "10000000": {p50: 50 * time.Millisecond}},
		"sidecar": {"1000000": {p50: 12 * time.Millisecond, sidecar: 0.2, memMiB: 40},
			"10000000": {p50: 60 * time.Millisecond, sidecar: 0.5, memMiB: 400}},
	})
	tables := sectionTables(t, d, "bulk")
	if len(tables) != 1 {
		t.Fatalf("%d tables, want one", len(tables))
	}
	small := tableRow(t, tables[0], "sidecar", "1.00")
	if !strings.HasPrefix(small[2], "0.800 ") || !strings.HasPrefix(small[3], "1.00x") || small[4] != "sidecar" || !strings.HasPrefix(small[5], "40.0 ") {
		t.Errorf("sidecar at 1 MB %q: want 0.800 Gbit/s, 1.00x the baseline, sidecar peak 40 MiB", small)
	}
	big := tableRow(t, tables[0], "sidecar", "10.0")
	if !strings.HasPrefix(big[2], "8.00 ") || !strings.HasPrefix(big[5], "400 ") {
		t.Errorf("sidecar at 10 MB %q: want 8.00 Gbit/s, sidecar peak 400 MiB", big)
	}
	if base := tableRow(t, tables[0], "baseline", "10.0"); base[3] != "—" || base[4] != "none" {
		t.Errorf("baseline at 10 MB %q: want no ratio and no proxy", base)
	}
}
