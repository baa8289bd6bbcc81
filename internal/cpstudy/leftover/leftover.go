package leftover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// Record is what a running study holds on the host.
type Record struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // the study's start time (hostsafe.ProcStart)
	// Cgroups are the study's top cgroup directories, one per hierarchy:
	// <mount>/<its own cgroup>/CgroupName(PID).
	Cgroups []string `json:"cgroups"`
	// Dir is the local control plane's working directory, a
	// DirPrefix* directory of root's.
	Dir string `json:"dir"`
}

// DirPrefix starts the name of the local control plane's working
// directory, made with os.MkdirTemp.
const DirPrefix = "meshbench-localkube-"

// CgroupName is the study's top cgroup directory name.
func CgroupName(pid int) string { return "mbcp-" + strconv.Itoa(pid) }

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

func recordPath(root string, pid int) string {
	return filepath.Join(root, "control-plane-"+strconv.Itoa(pid)+".json")
}

// Register writes r under root before the study makes what it names, so
// that a kill at any later point leaves enough to remove it; the study
// calls the returned release once it has removed them itself.
func Register(root string, r Record) (release func() error, err error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("control-plane study: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	path := recordPath(root, r.PID)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, fmt.Errorf("control-plane study: record it in %s: %w", root, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("control-plane study: record it in %s: %w", root, err)
	}
	return func() error { return os.Remove(path) }, nil
}

// check refuses a record that names what is not a study's: a cgroup not
// named CgroupName(PID) below the cgroup mounts, or a working directory
// that is not a DirPrefix* directory of root's (never a link).
func (r Record) check() error {
	if r.PID <= 0 {
		return fmt.Errorf("control-plane study record: pid %d", r.PID)
	}
	for _, d := range r.Cgroups {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d || !strings.HasPrefix(d, cgroupRoot+"/") || filepath.Base(d) != CgroupName(r.PID) {
			return fmt.Errorf("control-plane study record: cgroup %q is not the study's (%s/.../%s)", d, cgroupRoot, CgroupName(r.PID))
		}
	}
	if r.Dir == "" {
		return nil
	}
	if !filepath.IsAbs(r.Dir) || filepath.Clean(r.Dir) != r.Dir || !strings.HasPrefix(filepath.Base(r.Dir), DirPrefix) {
		return fmt.Errorf("control-plane study record: directory %q is not a local control plane's (%s*)", r.Dir, DirPrefix)
	}
	fi, err := os.Lstat(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || st.Uid != 0 {
		return fmt.Errorf("control-plane study record: %s is not a directory of root's", r.Dir)
	}
	return nil
}

// Found is a killed study's leftovers, as Remove would remove them.
type Found struct {
	Record
	// Processes are the pids still in its cgroups.
	Processes []int
	// Present are its cgroup directories and working directory that exist.
	Present []string
}

// Lines describes what Remove removes, one item a line.
func (f Found) Lines() []string {
	var out []string
	for _, p := range f.Processes {
		out = append(out, "process "+strconv.Itoa(p))
	}
	for _, p := range f.Present {
		kind := "file"
		if strings.HasPrefix(p, cgroupRoot+"/") {
			kind = "cgroup"
		}
		out = append(out, kind+" "+p)
	}
	return out
}

// List returns the leftovers of every study recorded under root whose
// process is gone, and removes nothing; a study still running is left out.
func List(root string) ([]Found, error) {
	paths, err := filepath.Glob(filepath.Join(root, "control-plane-*.json"))
	if err != nil {
		return nil, err
	}
	var out []Found
	var errs []error
	for _, p := range paths {
		var r Record
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err == nil && p != recordPath(root, r.PID) {
			err = errors.New("its name is not its pid's")
		}
		if err == nil {
			err = r.check()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: refused: %w; check it and remove it by hand", p, err))
			continue
		}
		if hostsafe.Alive(r.PID, r.Start) {
			continue
		}
		f := Found{Record: r}
		for _, d := range r.Cgroups {
			if _, err := os.Stat(d); err == nil {
				f.Present = append(f.Present, d)
				f.Processes = append(f.Processes, cluster.PidsBelow(d)...)
			}
		}
		if _, err := os.Lstat(r.Dir); r.Dir != "" && err == nil {
			f.Present = append(f.Present, r.Dir)
		}
		f.Present = append(f.Present, p)
		slices.Sort(f.Processes)
		f.Processes = slices.Compact(f.Processes)
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// Remove removes what every study recorded under root whose process is
// gone left behind: it kills the processes in its cgroups, removes the
// cgroups and the local control plane's working directory, then the
// record. It returns what it removed.
func Remove(ctx context.Context, root string, log *slog.Logger) ([]Found, error) {
	found, err := List(root)
	errs := []error{err}
	var removed []Found
	for _, f := range found {
		if err := remove(ctx, f, root); err != nil {
			errs = append(errs, fmt.Errorf("control-plane study pid %d: %w", f.PID, err))
			continue
		}
		log.Info("removed a killed control-plane study's leftovers", "pid", f.PID, "removed", f.Present)
		removed = append(removed, f)
	}
	return removed, errors.Join(errs...)
}

func remove(ctx context.Context, f Found, root string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		for _, d := range f.Cgroups {
			pids = append(pids, cluster.PidsBelow(d)...)
		}
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("processes still alive after SIGKILL: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, d := range f.Cgroups {
		if err := cluster.RemoveCgroupTree(d); err != nil {
			return err
		}
	}
	if f.Dir != "" {
		if err := os.RemoveAll(f.Dir); err != nil {
			return err
		}
	}
	if err := os.Remove(recordPath(root, f.PID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
