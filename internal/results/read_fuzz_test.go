package results

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds the results reader an arbitrary study.json and cell
// file, as a damaged or hand-edited results directory would hold: it must
// never panic (a cell's histograms are decoded from compressed base64),
// and it either reads them or says what is wrong.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "study": "quick", "cells": [{"id": "c1", "file": "cells/c1.json"}]}`),
		[]byte(`{"id": "c1", "merged": {"histogram": "HISTFAAAACh42pNpmSzMwMDAxAABzFCaEUoz2X+AsQEAQ9EEhQ=="}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, index, cell []byte) {
		if err := os.WriteFile(filepath.Join(dir, IndexFile), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, CellsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, CellFile("c1")), cell, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := ReadIndex(dir)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
		} else if ix.Schema < OldestSchema || ix.Schema > SchemaVersion {
			t.Fatalf("read schema %d", ix.Schema)
		}
		if _, err := ReadCell(dir, Summary{ID: "c1", File: CellFile("c1")}); err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}
