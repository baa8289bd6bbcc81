package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// VictimContent is what RootVictim's file holds until something writes it.
const VictimContent = "root's\n"

// RootVictim makes a root-owned 0644 file holding VictimContent in a new
// directory every user may enter (0755), removed when the test ends: a
// test that a process may not write root's files has it try this one.
func RootVictim(t testing.TB) (dir, victim string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "mb-victim-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	victim = filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte(VictimContent), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, victim
}
