package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/results/confined"
)

// LockFile is the lock a run holds on its results directory (flock),
// which names the run holding it.
const LockFile = ".meshbench.lock"

// maxHolderBytes bounds what is read of the lock file to name its
// holder: a process ID, a host name, a command line and a time.
const maxHolderBytes = 64 << 10

// Holder is the run that holds a results directory's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command []string  `json:"command"`
	Start   time.Time `json:"start"`
}

func (h Holder) String() string {
	return fmt.Sprintf("pid %d on host %s (%s), since %s", h.PID, h.Host, strings.Join(h.Command, " "), h.Start.Format(time.RFC3339))
}

// LockedError refuses a results directory another run is writing.
type LockedError struct {
	Dir string
	// Holder is nil when the holder had not yet written its name.
	Holder *Holder
}

func (e *LockedError) Error() string {
	who := "another meshbench run"
	if e.Holder != nil {
		who = "another meshbench run: " + e.Holder.String()
	}
	return fmt.Sprintf("results directory %s is in use by %s; wait for it to end, or stop it (it can be resumed)", e.Dir, who)
}

// Lock is a held results directory lock.
type Lock struct{ f *os.File }

// Acquire takes dir's lock for this process, which runs command, or
// refuses with a *LockedError naming the run that holds it. The lock
// lasts until Release, or until the process ends however it ends.
func Acquire(dir string, command []string) (*Lock, error) {
	f, err := confined.OpenFile(dir, LockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := flock(f); err != nil {
		defer f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		e := &LockedError{Dir: dir}
		var h Holder
		// Bounded: the lock file is in a directory that may be someone
		// else's, and a holder's name is a line.
		if b, rerr := io.ReadAll(io.LimitReader(f, maxHolderBytes)); rerr == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 {
			e.Holder = &h
		}
		return nil, e
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Command: command, Start: time.Now().UTC()})
	if err := writeHolder(f, append(b, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &Lock{f: f}, nil
}

func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func writeHolder(f *os.File, b []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(b, 0)
	return err
}

// Release gives the lock up. The file stays: removing it would let a
// run that opened it before the removal lock a file no later run sees.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}
