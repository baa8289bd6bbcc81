package resultstest

import (
	"os"
	"path/filepath"
	"testing"
)

// SwapForLink makes the directory dir beneath root, then swaps its
// component swapped (dir itself or one of its parents) for a link to a new
// empty directory outside, as someone sharing a results directory could
// during a run, and returns that directory: a writer that stays confined
// leaves it empty.
func SwapForLink(t *testing.T, root, dir, swapped string) (outside string) {
	t.Helper()
	outside = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, swapped)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, swapped)); err != nil {
		t.Fatal(err)
	}
	return outside
}
