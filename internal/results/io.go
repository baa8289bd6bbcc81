package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// IndexFile is the name of the index in a results directory.
const IndexFile = "study.json"

// WriteJSON writes v as indented JSON to path atomically: to a temporary
// file in the same directory, synced, then renamed over path, so that a
// reader or a crash never sees a half-written file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, append(b, '\n'))
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadIndex reads dir/study.json.
func ReadIndex(dir string) (*Index, error) {
	var ix Index
	if err := readJSON(filepath.Join(dir, IndexFile), &ix); err != nil {
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
	if err := readJSON(filepath.Join(dir, s.File), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
