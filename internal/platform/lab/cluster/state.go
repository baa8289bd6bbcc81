package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meshbench/meshbench/internal/hostsafe"
)

// stateFileName is the lab's state in its state directory: enough for
// another process to show, enter or tear down the lab.
const stateFileName = "state.json"

// State is what a lab records in its state directory.
type State struct {
	Name     string `json:"name"`
	Prefix   string `json:"prefix"`
	StateDir string `json:"state_dir"`
	// Owner is the process that runs the lab, and OwnerStart its start
	// time in clock ticks, so that a recycled PID is not mistaken for it.
	Owner      int    `json:"owner"`
	OwnerStart uint64 `json:"owner_start"`
	// Supervisor says the owner is a detached `meshbench lab supervise`
	// that Teardown should stop.
	Supervisor bool      `json:"supervisor"`
	Cgroups    cgroups   `json:"cgroups"`
	Nodes      []Node    `json:"nodes"`
	Pods       []Pod     `json:"pods"`
	Services   []Service `json:"services"`
	Updated    time.Time `json:"updated"`
}

// ReadState reads a lab's state directory.
func ReadState(stateDir string) (State, error) { return readState(stateDir) }

// readState reads and checks the state in dir, a lab's on this host's
// cgroup mounts.
func readState(dir string) (State, error) { return readStateAt(dir, cgroupRoot) }

// readStateAt reads the state in dir, checked against the cgroup mounts
// at cgRoot (a fake tree in tests).
func readStateAt(dir, cgRoot string) (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(dir, stateFileName))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("read lab state %s: %w", dir, err)
	}
	if err := st.check(cgRoot); err != nil {
		return State{}, fmt.Errorf("read lab state %s: refused: %w", dir, err)
	}
	return st, nil
}

// check refuses a state that names what is not the lab's: lab down kills
// every process below each cgroup directory it lists and removes the
// trees, and joins the name with the state root, so each must be the
// lab's own, <cgroup mount>/.../<prefix>-lab, as detectCgroups makes it.
func (st State) check(root string) error {
	if err := CheckName(st.Name); err != nil {
		return err
	}
	if err := CheckPrefix(st.Prefix); err != nil {
		return err
	}
	return st.Cgroups.checkOwn(st.Prefix, root)
}

// ownerAlive reports whether the lab's owner process still runs: same
// PID, same start time, and not a zombie waiting for its parent.
func (st State) ownerAlive() bool { return hostsafe.Alive(st.Owner, st.OwnerStart) }

// stateWriter rewrites the state file after changes, at most a few times
// a second.
type stateWriter struct {
	l     *Lab
	kickc chan struct{}
	quit  chan struct{}
	done  chan struct{}
	mu    sync.Mutex // serializes writes
}

func newStateWriter(l *Lab) *stateWriter {
	return &stateWriter{l: l, kickc: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// create makes the state directory, refusing one that exists, and writes
// the first state.
func (w *stateWriter) create() error {
	dir := w.l.cfg.StateDir
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: state directory %s exists; run meshbench lab down --name %s", ErrAlreadyUp, dir, w.l.cfg.Name)
		}
		return fmt.Errorf("create state directory: %w", err)
	}
	if err := os.Mkdir(w.l.logDir(), 0o755); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	return w.write()
}

func (w *stateWriter) start() { go w.loop() }

func (w *stateWriter) kick() {
	select {
	case w.kickc <- struct{}{}:
	default:
	}
}

func (w *stateWriter) stop() {
	close(w.quit)
	<-w.done
}

func (w *stateWriter) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.quit:
			return
		case <-w.kickc:
		}
		if err := w.write(); err != nil {
			w.l.log.Warn("lab state", "err", err)
		}
		select {
		case <-w.quit:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *stateWriter) write() error {
	l := w.l
	st := State{Name: l.cfg.Name, Prefix: l.cfg.Prefix, StateDir: l.cfg.StateDir, Owner: os.Getpid(),
		Supervisor: l.cfg.Supervisor, Cgroups: l.cg, Nodes: l.Nodes(), Updated: time.Now()}
	st.OwnerStart, _ = hostsafe.ProcStart(st.Owner)
	st.Pods, st.Services = l.Pods(), l.Services()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab state: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	tmp := filepath.Join(l.cfg.StateDir, stateFileName+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(l.cfg.StateDir, stateFileName)); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	return nil
}

// checkOwn refuses cgroup directories that are not the lab's own for its
// prefix: each a clean absolute path below root (the cgroup mounts) named
// <prefix>-lab, under a controller the lab uses, and on v2 under systemd
// in the lab's own scope, meshbench-<prefix>.scope.
func (cg cgroups) checkOwn(prefix, root string) error {
	for c, d := range cg.Dirs {
		if cg.V2 && c != "" || !cg.V2 && !slices.Contains(v1Controllers, c) {
			return fmt.Errorf("cgroup directory %s: controller %q is not one the lab uses", d, c)
		}
		if !filepath.IsAbs(d) || filepath.Clean(d) != d || !strings.HasPrefix(d, root+"/") || filepath.Base(d) != labCgroupName(prefix) {
			return fmt.Errorf("cgroup directory %q is not the lab's own cgroup (%s/.../%s)", d, root, labCgroupName(prefix))
		}
	}
	// The scope is stopped and removed by lab down: a state naming
	// another unit or directory would have root stop or remove it.
	if cg.Unit != "" && cg.Unit != scopeUnit(prefix) {
		return fmt.Errorf("systemd unit %q is not the lab's own (%s)", cg.Unit, scopeUnit(prefix))
	}
	if cg.Scope != "" {
		if !filepath.IsAbs(cg.Scope) || filepath.Clean(cg.Scope) != cg.Scope || !strings.HasPrefix(cg.Scope, root+"/") || filepath.Base(cg.Scope) != scopeUnit(prefix) {
			return fmt.Errorf("cgroup scope %q is not the lab's own (%s/.../%s)", cg.Scope, root, scopeUnit(prefix))
		}
		if d := cg.Dirs[""]; filepath.Dir(d) != cg.Scope {
			return fmt.Errorf("cgroup directory %q is not in the lab's scope %s", d, cg.Scope)
		}
	}
	return nil
}
