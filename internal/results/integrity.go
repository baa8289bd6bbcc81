package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/meshbench/meshbench/internal/results/confined"
)

// WriteCell writes c to dir/c.File atomically, then records the file's
// SHA-256 and size in c.SHA256 and c.Bytes for the index.
func WriteCell(dir string, c *Cell) error {
	c.SHA256, c.Bytes = "", 0
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", c.File, err)
	}
	b = append(b, '\n')
	if err := WriteFile(dir, c.File, b); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	c.SHA256, c.Bytes = hex.EncodeToString(sum[:]), int64(len(b))
	return nil
}

// DamagedCell is a cell file that is not what the run wrote.
type DamagedCell struct {
	ID, File string
	// Problem says how: missing, truncated or changed.
	Problem string
}

func (d *DamagedCell) Error() string { return d.File + ": " + d.Problem }

// CheckCell compares s's cell file with the hash and size the index
// recorded; nil when it matches. A blank hash is damage too: the index
// was edited, as every cell file a run writes has its hash recorded. The
// hashes guard against accidents (a truncated copy, a disk error, an
// edit): whoever can edit a cell file can edit its hash in the index.
func CheckCell(dir string, s Summary) *DamagedCell {
	damaged := func(format string, args ...any) *DamagedCell {
		return &DamagedCell{ID: s.ID, File: s.File, Problem: fmt.Sprintf(format, args...)}
	}
	if s.SHA256 == "" {
		return damaged("no sha256 recorded in %s", IndexFile)
	}
	f, err := confined.Open(dir, s.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return damaged("missing")
	case err != nil:
		return damaged("unreadable: %v", err)
	}
	defer f.Close()
	// The size first, from the file's metadata: a file of another size
	// than the run wrote, or larger than a cell can be, is damaged
	// without a byte of it read.
	st, err := f.Stat()
	if err != nil {
		return damaged("unreadable: %v", err)
	}
	size := st.Size()
	switch {
	case s.Bytes > 0 && size < s.Bytes:
		return damaged("truncated: %d of the %d bytes the run wrote", size, s.Bytes)
	case s.Bytes > 0 && size > s.Bytes:
		return damaged("changed since the run wrote it: %d bytes, the run wrote %d", size, s.Bytes)
	case size > MaxCellBytes:
		return damaged("%d bytes, more than the %d a cell file can be", size, int64(MaxCellBytes))
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, size)); err != nil {
		return damaged("unreadable: %v", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
		return damaged("changed since the run wrote it (sha256 %.12s…, recorded %.12s…)", got, s.SHA256)
	}
	return nil
}

// CheckCells checks every cell file the index lists, other attempts' and
// capacity trials' included. Results of schema 1 recorded no hashes, and are not checked.
func CheckCells(dir string, ix *Index) []*DamagedCell {
	if ix.Schema < 2 {
		return nil
	}
	var out []*DamagedCell
	for _, s := range ix.Cells {
		if d := CheckCell(dir, s); d != nil {
			out = append(out, d)
		}
		for _, a := range s.Attempts {
			if d := CheckCell(dir, a.summary(s.ID)); d != nil {
				out = append(out, d)
			}
		}
	}
	for _, c := range ix.Capacity {
		for _, t := range c.Trials {
			if d := CheckCell(dir, Summary{ID: t.ID, File: t.File, SHA256: t.SHA256, Bytes: t.Bytes}); d != nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// DamagedError refuses results whose cell files are not what the run
// wrote, naming each and the way to measure them again.
type DamagedError struct {
	Dir   string
	Cells []*DamagedCell
}

func (e *DamagedError) Error() string {
	lines := make([]string, 0, len(e.Cells)+2)
	lines = append(lines, fmt.Sprintf("%s: %d cell file(s) are not what the run wrote, so their figures cannot be trusted:", e.Dir, len(e.Cells)))
	for _, d := range e.Cells {
		lines = append(lines, "  "+d.Error())
	}
	lines = append(lines, fmt.Sprintf("re-run those cells with: meshbench run --resume %s", e.Dir))
	return strings.Join(lines, "\n")
}
