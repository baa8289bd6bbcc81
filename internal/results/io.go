package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/results/confined"
)

// IndexFile is the name of the index in a results directory.
const IndexFile = "study.json"

// WriteJSON writes v as indented JSON to the file name beneath dir
// atomically (WriteFile).
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return WriteFile(dir, name, append(b, '\n'))
}

// WriteFile writes data to the file name beneath dir atomically: to a
// temporary file in the same directory, synced, then renamed over name,
// and the directory synced, so that a reader or a crash never sees a
// half-written file. A symbolic link on the way is refused (a results
// directory may come from someone else); one at name is replaced.
func WriteFile(dir, name string, data []byte) error { return confined.WriteFile(dir, name, data) }

// OpenFile opens a file beneath a results directory for writing, without
// following a symbolic link (see confined.OpenFile).
func OpenFile(dir, name string, flag int) (*os.File, error) {
	return confined.OpenFile(dir, name, flag, 0o644)
}

// Mkdir creates a directory beneath a results directory, and its parents,
// without following a symbolic link.
func Mkdir(dir, name string) error { return confined.Mkdir(dir, name) }

// ReadIndex reads dir/study.json.
func ReadIndex(dir string) (*Index, error) {
	var ix Index
	if err := readJSON(dir, IndexFile, MaxIndexBytes, &ix); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a results directory: no %s", dir, IndexFile)
		}
		return nil, err
	}
	if ix.Schema < OldestSchema || ix.Schema > SchemaVersion {
		return nil, fmt.Errorf("%s: results schema %d, this meshbench reads %d to %d", dir, ix.Schema, OldestSchema, SchemaVersion)
	}
	return &ix, nil
}

// ReadCell reads one cell's full result.
func ReadCell(dir string, s Summary) (*Cell, error) {
	var c Cell
	if err := readJSON(dir, s.File, MaxCellBytes, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func readJSON(dir, name string, limit int64, v any) error {
	b, err := confined.ReadFile(dir, name, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}
