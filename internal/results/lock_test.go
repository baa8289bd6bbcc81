package results

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAcquireReadsABoundedHolder locks a results directory whose lock
// file someone made a sparse 1 GB file, holding its lock: Acquire names
// the directory as in use, reading no more of it than a holder's line.
func TestAcquireReadsABoundedHolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Acquire(dir, []string{"meshbench", "run"})
	runtime.ReadMemStats(&after)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder != nil {
		t.Fatalf("Acquire: %v, want the directory in use by an unnamed run", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("Acquire allocated %d bytes reading the lock file, want under 1 MiB", grew)
	}
}
