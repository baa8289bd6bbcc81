package results

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckCell damages a written cell file each way a disk, an editor or
// a careless copy can, and checks that the check names how.
func TestCheckCell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(path string) error
		// unrecorded: the index holds no hash, which a run always records.
		unrecorded bool
		// claim, when set, is the size the index records.
		claim int64
		want  string
	}{
		{name: "intact", damage: func(string) error { return nil }},
		{name: "missing", damage: os.Remove, want: "missing"},
		{name: "truncated", damage: func(p string) error { return os.Truncate(p, 40) }, want: "truncated: 40 of the"},
		{name: "changed", damage: func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, []byte(strings.Replace(string(b), `"requests": 1000`, `"requests": 2000`, 1)), 0o644)
		}, want: "changed since the run wrote it"},
		{name: "unrecorded", damage: func(string) error { return nil }, unrecorded: true, want: "no sha256 recorded"},
		// A hostile results directory: a sparse file of 10 GB, which costs
		// its maker nothing, is damaged from its size alone, none of it
		// read, with the size the index records or with that edited to
		// match.
		{name: "sparse", damage: func(p string) error { return os.Truncate(p, 10<<30) },
			want: "changed since the run wrote it: 10737418240 bytes, the run wrote"},
		{name: "sparse, index edited", damage: func(p string) error { return os.Truncate(p, 10<<30) }, claim: 10 << 30,
			want: "10737418240 bytes, more than the 268435456 a cell file can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := &Cell{Summary: Summary{ID: "c1", File: CellFile("c1"), Status: StatusOK, Requests: 1000}}
			if err := WriteCell(dir, c); err != nil {
				t.Fatal(err)
			}
			if len(c.SHA256) != 64 || c.Bytes == 0 {
				t.Fatalf("WriteCell recorded sha256 %q, %d bytes", c.SHA256, c.Bytes)
			}
			if err := tt.damage(filepath.Join(dir, c.File)); err != nil {
				t.Fatal(err)
			}
			s := c.Summary
			if tt.unrecorded {
				s.SHA256, s.Bytes = "", 0
			}
			if tt.claim != 0 {
				s.Bytes = tt.claim
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			d := CheckCell(dir, s)
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("CheckCell allocated %d bytes, want under 1 MiB whatever the file's size", grew)
			}
			switch {
			case tt.want == "" && d != nil:
				t.Fatalf("CheckCell: %v, want none", d)
			case tt.want != "" && (d == nil || !strings.Contains(d.Error(), tt.want) || !strings.HasPrefix(d.Error(), c.File+": ")):
				t.Fatalf("CheckCell: %v, want %s: ...%s...", d, c.File, tt.want)
			}
		})
	}
}

// The cell file itself holds no hash (it cannot hold its own); the
// index's summary does.
func TestWriteCellKeepsTheHashOutOfTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Cell{Summary: Summary{ID: "c1", File: CellFile("c1"), SHA256: "stale", Bytes: 7}}
	if err := WriteCell(dir, c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sha256") || int64(len(b)) != c.Bytes {
		t.Errorf("cell file holds a hash, or %d bytes recorded for %d:\n%s", c.Bytes, len(b), b)
	}
}

func TestDamagedErrorSaysHowToRecover(t *testing.T) {
	t.Parallel()
	err := &DamagedError{Dir: "results/q", Cells: []*DamagedCell{{ID: "a", File: "cells/a.json", Problem: "missing"}}}
	for _, want := range []string{"results/q: 1 cell file(s)", "  cells/a.json: missing", "meshbench run --resume results/q"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
}

// TestCheckCellsChecksCapacityTrials: a capacity trial's cell file is
// checked against its recorded hash like any cell's.
func TestCheckCellsChecksCapacityTrials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Cell{Summary: Summary{ID: "t1", File: CellFile("t1"), Status: StatusOK, Requests: 1000}}
	if err := WriteCell(dir, c); err != nil {
		t.Fatal(err)
	}
	ix := &Index{Schema: SchemaVersion, Capacity: []Capacity{{Mesh: "baseline",
		Trials: []CapacityTrial{{ID: c.ID, File: c.File, SHA256: c.SHA256, Bytes: c.Bytes}}}}}
	if d := CheckCells(dir, ix); len(d) != 0 {
		t.Fatalf("intact: %v", d)
	}
	if err := os.WriteFile(filepath.Join(dir, c.File), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := CheckCells(dir, ix); len(d) != 1 || d[0].ID != "t1" {
		t.Fatalf("changed: %v, want the trial named", d)
	}
}

// TestCheckCellsChecksAttempts: another attempt's cell file, made a
// sparse 10 GB file, is damaged from its size alone, named by its file.
func TestCheckCellsChecksAttempts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Cell{Summary: Summary{ID: "c1", File: CellFile("c1"), Status: StatusOK, Requests: 1000}}
	if err := WriteCell(dir, c); err != nil {
		t.Fatal(err)
	}
	a := &Cell{Summary: Summary{ID: "c1", Attempt: 2, File: AttemptFile("c1", 2), Status: StatusOK, Requests: 1000}}
	if err := WriteCell(dir, a); err != nil {
		t.Fatal(err)
	}
	s := c.Summary
	s.Attempts = []Attempt{AttemptOf(a.Summary)}
	ix := &Index{Schema: SchemaVersion, Cells: []Summary{s}}
	if d := CheckCells(dir, ix); len(d) != 0 {
		t.Fatalf("intact: %v", d)
	}
	if err := os.Truncate(filepath.Join(dir, a.File), 10<<30); err != nil {
		t.Fatal(err)
	}
	d := CheckCells(dir, ix)
	if len(d) != 1 || d[0].File != a.File || !strings.Contains(d[0].Error(), "changed since the run wrote it: 10737418240 bytes") {
		t.Fatalf("a sparse attempt: %v, want its file named, damaged by its size", d)
	}
}
