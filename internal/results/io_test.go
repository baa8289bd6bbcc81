package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteJSONIsAtomicAndReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix := Index{Schema: SchemaVersion, Study: "quick", Cells: []Summary{{ID: "c1", Mesh: "baseline", Status: StatusOK}}}
	if err := WriteJSON(dir, IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	// Overwrite: readers must see either the old or the new file, and no
	// temporary file may be left behind.
	ix.Complete = true
	if err := WriteJSON(dir, IndexFile, ix); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only %s", len(entries), IndexFile)
	}
	got, err := ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Complete || got.Cells[0].ID != "c1" {
		t.Fatalf("read back %+v", got)
	}
}

// Results of schema 1, from before capacity searches, read as results
// without them.
func TestReadIndexSchema1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(`{"schema": 1, "study": "quick", "cells": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadIndex(dir)
	if err != nil || ix.Study != "quick" || ix.Capacity != nil {
		t.Fatalf("schema 1: %+v, %v", ix, err)
	}
}

func TestReadIndexReadsSchema2(t *testing.T) {
	t.Parallel()
	// Schema 3 only added optional fields: a schema 2 directory reads.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(`{"schema": 2, "study": "old"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if ix, err := ReadIndex(dir); err != nil || ix.Study != "old" {
		t.Fatalf("ReadIndex = %+v, %v", ix, err)
	}
}

func TestReadIndexErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"missing", "", "not a results directory"},
		{"garbage", "{", "study.json"},
		{"schema", `{"schema": 99}`, "schema 99"},
		{"schema 0", `{"schema": 0}`, "schema 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.content != "" {
				if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadIndex(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Schema 1 lacks only the cell files' hashes: it is read as it is, and its
// cell files go unchecked.
func TestReadIndexReadsSchema1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix := `{"schema": 1, "study": "quick", "cells": [{"id": "c1", "file": "cells/c1.json", "status": "ok"}]}`
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(ix), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := CheckCells(dir, got); len(d) != 0 {
		t.Errorf("schema 1 cells checked against hashes it never recorded: %v", d)
	}
}
