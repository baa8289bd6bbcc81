package lab

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
)

// testPrefix is a lab prefix no other test or helper uses.
func testPrefix() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return "mbt" + hex.EncodeToString(b)
}

// openTempDir is a temporary directory other users can traverse (not
// t.TempDir's 0700): proxies run as 1337 and apps as AppUID, and each
// must reach its files under the lab's state directory.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mb-lab-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
