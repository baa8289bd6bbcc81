package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// TeardownOptions name the lab to remove. Name finds its state directory,
// which names its prefix; Prefix, given explicitly, finds namespaces and
// cgroups even without one.
type TeardownOptions struct {
	Name     string
	Prefix   string
	StateDir string // default /run/meshbench/<Name>
	Logger   *slog.Logger
}

// Teardown removes a lab from outside: it stops its supervisor if it has
// one, then kills every process in the lab's cgroups and removes its
// network namespaces (and with them every veth and iptables rule), its
// cgroups and its state directory. It works after a crash or kill -9 of
// the owner, and on a lab already gone. Without a state directory it
// touches nothing unless the prefix is given: a guessed prefix could be
// another lab's.
func Teardown(ctx context.Context, o TeardownOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if os.Geteuid() != 0 {
		return errors.New("lab down needs root: run meshbench as root")
	}
	if o.StateDir == "" && o.Name != "" {
		o.StateDir = filepath.Join(DefaultStateRoot, o.Name)
	}
	var cgs []cgroups
	st, err := readState(o.StateDir)
	switch {
	case err == nil:
		if o.Prefix != "" && o.Prefix != st.Prefix {
			return fmt.Errorf("lab %s has prefix %s, not %s", st.Name, st.Prefix, o.Prefix)
		}
		o.Prefix = st.Prefix
		cgs = append(cgs, st.Cgroups)
		if st.Supervisor && st.ownerAlive() {
			stopSupervisor(ctx, st, o.Logger)
		}
	case o.Prefix == "":
		o.Logger.Info("no lab state: nothing removed; give the prefix to remove leftovers by prefix", "state", o.StateDir)
		return nil
	}
	if !prefixRE.MatchString(o.Prefix) {
		return fmt.Errorf("lab prefix %q: want 1 to 8 lower-case letters or digits", o.Prefix)
	}
	if own, err := detectCgroups(o.Prefix); err == nil {
		own.Enabled = nil // what is off now in this process's parent, not what the lab turned on
		cgs = append(cgs, own)
	}
	return removeAll(ctx, o.Prefix, o.StateDir, cgs, o.Logger)
}

// SupervisorLog is where a detached supervisor of the lab with this state
// directory writes its output; it goes with the lab.
func SupervisorLog(stateDir string) string { return filepath.Clean(stateDir) + ".log" }

// stopSupervisor asks a detached supervisor to bring its lab down, and
// kills it if it has not exited after a while.
func stopSupervisor(ctx context.Context, st State, log *slog.Logger) {
	log.Info("stopping lab supervisor", "pid", st.Owner)
	_ = syscall.Kill(st.Owner, syscall.SIGTERM)
	deadline := time.Now().Add(15 * time.Second)
	for st.ownerAlive() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	if st.ownerAlive() {
		log.Warn("lab supervisor did not stop; killing it", "pid", st.Owner)
		_ = syscall.Kill(st.Owner, syscall.SIGKILL)
	}
}

// removeAll kills every process in the lab's cgroups, then deletes its
// namespaces, cgroups and state directory. Each step runs even when an
// earlier one failed.
func removeAll(ctx context.Context, prefix, stateDir string, cgs []cgroups, log *slog.Logger) error {
	var tops []string
	seen := map[string]bool{}
	for _, cg := range cgs {
		for _, t := range cg.hierarchies() {
			if !seen[t] {
				seen[t] = true
				tops = append(tops, t)
			}
		}
	}
	var errs []error
	if err := killAll(ctx, tops); err != nil {
		errs = append(errs, err)
	}
	names, err := listNetns(prefix)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if err := deleteNetns(n); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range tops {
		if err := removeTree(t); err != nil {
			errs = append(errs, err)
		}
	}
	for _, cg := range cgs {
		kept, err := cg.restoreParent()
		if err != nil {
			errs = append(errs, err)
		}
		if len(kept) > 0 {
			log.Info("cgroup controllers left on: another cgroup below the lab's parent uses them", "controllers", kept, "parent", filepath.Dir(cg.Dirs[""]))
		}
	}
	if stateDir != "" {
		if err := os.RemoveAll(stateDir); err != nil {
			errs = append(errs, fmt.Errorf("remove state directory: %w", err))
		}
		if err := os.Remove(SupervisorLog(stateDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove supervisor log: %w", err))
		}
	}
	log.Info("lab removed", "prefix", prefix, "namespaces", len(names))
	return errors.Join(errs...)
}

// killAll SIGKILLs every process in the cgroup trees until none is left.
func killAll(ctx context.Context, tops []string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		for _, t := range tops {
			pids = append(pids, pidsBelow(t)...)
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("lab processes still alive after SIGKILL: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TeardownOrphans removes every lab under the state root whose owner is
// gone, as Teardown does, and returns what it removed. A lab whose owner
// still runs, another run's or another user's, is left alone.
func TeardownOrphans(ctx context.Context, root string, log *slog.Logger) ([]Other, error) {
	others, err := Others(root, "")
	if err != nil {
		return nil, err
	}
	var removed []Other
	var errs []error
	for _, o := range others {
		if o.OwnerAlive {
			continue
		}
		if err := Teardown(ctx, TeardownOptions{Name: o.Name, StateDir: o.StateDir, Logger: log}); err != nil {
			errs = append(errs, fmt.Errorf("lab %s: %w", o.Name, err))
			continue
		}
		removed = append(removed, o)
	}
	return removed, errors.Join(errs...)
}
