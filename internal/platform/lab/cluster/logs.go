package cluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/results/confined"
)

// A kept copy of a pod's log is at most keptLogLimit bytes: its first
// keptLogHead bytes (start-up) and its end (the latest failure), so that
// a pod that logs without pause cannot fill a results directory.
const (
	keptLogLimit = 1 << 20
	keptLogHead  = 64 << 10
)

// podLogName is the file name of a pod's log, live or kept.
func podLogName(namespace, pod string) string { return namespace + "_" + pod + ".log" }

// liveLog is a pod's log in the state directory, which Down removes.
func (l *Lab) liveLog(namespace, pod string) string {
	return filepath.Join(l.logDir(), podLogName(namespace, pod))
}

// LogPath is where a pod's log can be read: in Config.KeepLogDir, where
// Down leaves it, when that is set; else the live log in the state
// directory, until Down. Error messages name it.
func (l *Lab) LogPath(namespace, pod string) string {
	if !l.cfg.KeepLogDir.IsZero() {
		return filepath.Join(l.cfg.KeepLogDir.Path(), podLogName(namespace, pod))
	}
	return l.liveLog(namespace, pod)
}

// KeepLog writes a copy of a pod's log as it is now into dir, cut to at
// most keptLogLimit bytes, replacing any file there, and returns the
// copy's path.
func (l *Lab) KeepLog(namespace, pod string, dir confined.Dir) (string, error) {
	name := podLogName(namespace, pod)
	return filepath.Join(dir.Path(), name), keepLog(l.liveLog(namespace, pod), dir, name, os.O_TRUNC, "")
}

// keepLogs copies every pod's log, deleted pods' included, to
// Config.KeepLogDir. Down calls it once the processes are gone, so that
// the copies are complete. A file already there (from the lab of an
// earlier, interrupted run into the same directory) is added to, after a
// line naming this lab.
func (l *Lab) keepLogs() error {
	entries, err := os.ReadDir(l.logDir())
	if err != nil {
		return fmt.Errorf("keep the pods' logs: %w", err)
	}
	sep := fmt.Sprintf("\n==== meshbench-lab: lab %s, logs kept at %s ====\n", l.cfg.Name, time.Now().UTC().Format(time.RFC3339))
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".log") {
			err := keepLog(filepath.Join(l.logDir(), e.Name()), l.cfg.KeepLogDir, e.Name(), os.O_APPEND, sep)
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("keep the pods' logs: %w", err)
	}
	return nil
}

// keepLog copies src to the file name in dir, opened with flag (O_TRUNC
// or O_APPEND); sep comes first when that file is not empty. dir may be
// in a results directory from someone else: a link planted at the file,
// or swapped in for a directory on its way, is refused, not written
// through.
func keepLog(src string, dir confined.Dir, name string, flag int, sep string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := dir.OpenFile(name, os.O_CREATE|os.O_WRONLY|flag, 0o644)
	if err != nil {
		return err
	}
	if ost, err := out.Stat(); err == nil && ost.Size() > 0 && sep != "" {
		_, _ = io.WriteString(out, sep)
	}
	err = copyCapped(out, in, st.Size())
	return errors.Join(err, out.Close())
}

// copyCapped copies the first size bytes of r to w, or when there are
// more than keptLogLimit, the first keptLogHead and the last ones, with a
// line saying how much was left out between them.
func copyCapped(w io.Writer, r io.ReaderAt, size int64) error {
	if size <= keptLogLimit {
		_, err := io.Copy(w, io.NewSectionReader(r, 0, size))
		return err
	}
	tail := int64(keptLogLimit - keptLogHead)
	if _, err := io.Copy(w, io.NewSectionReader(r, 0, keptLogHead)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\n[meshbench-lab: %d bytes of this log left out; its first %d and last %d bytes are kept]\n",
		size-keptLogHead-tail, keptLogHead, tail); err != nil {
		return err
	}
	_, err := io.Copy(w, io.NewSectionReader(r, size-tail, tail))
	return err
}
