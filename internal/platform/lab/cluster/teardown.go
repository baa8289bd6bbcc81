package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
func Teardown(ctx context.Context, o TeardownOptions) error { return realHost().teardown(ctx, o) }

func (h host) teardown(ctx context.Context, o TeardownOptions) error {
	t, err := h.resolve(&o)
	if err != nil || t == nil {
		return err
	}
	if t.state != nil && t.state.Supervisor && t.state.ownerAlive() {
		stopSupervisor(ctx, *t.state, o.Logger)
	}
	return removeAll(ctx, h, t.prefix, o.StateDir, t.cgs, o.Logger)
}

// target is what Teardown removes: the lab's prefix and cgroup trees, and
// its state when the lab has one.
type target struct {
	prefix string
	cgs    []cgroups
	state  *State
}

// resolve finds the lab the options name, as Teardown and Inventory both
// see it; nil when there is no state and no prefix, so nothing to touch.
func (h host) resolve(o *TeardownOptions) (*target, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Name != "" {
		if err := CheckName(o.Name); err != nil {
			return nil, err
		}
	}
	if o.Prefix != "" {
		if err := CheckPrefix(o.Prefix); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("lab down needs root: run meshbench as root")
	}
	if o.StateDir == "" && o.Name != "" {
		o.StateDir = filepath.Join(DefaultStateRoot, o.Name)
	}
	t := &target{}
	st, err := State{}, error(os.ErrNotExist) // a prefix alone names no state
	if o.StateDir != "" {
		st, err = readState(o.StateDir)
	}
	switch {
	case err == nil:
		if o.Prefix != "" && o.Prefix != st.Prefix {
			return nil, fmt.Errorf("lab %s has prefix %s, not %s", st.Name, st.Prefix, o.Prefix)
		}
		o.Prefix = st.Prefix
		t.cgs = append(t.cgs, st.Cgroups)
		t.state = &st
	case !errors.Is(err, os.ErrNotExist):
		// Its cgroup directories or names are not the lab's, or it is not
		// a state at all: nothing it names is touched.
		return nil, fmt.Errorf("%w; remove nothing it names: check %s and remove it by hand", err, o.StateDir)
	case o.Prefix == "":
		o.Logger.Info("no lab state: nothing removed; give the prefix to remove leftovers by prefix", "state", o.StateDir)
		return nil, nil
	}
	// A state's prefix is input too: checked like the flag's.
	if err := CheckPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if own, err := h.detectCgroups(o.Prefix); err == nil {
		t.cgs = append(t.cgs, own)
	}
	t.prefix = o.Prefix
	return t, nil
}

// Removal lists what Teardown would remove for a lab, and removes nothing.
type Removal struct {
	Prefix string
	// Supervisor is the pid of the lab's live detached supervisor, which
	// Teardown stops first; 0 when there is none.
	Supervisor int
	// Processes are the processes in the lab's cgroups, as "pid (command)".
	Processes []string
	// Namespaces are the lab's network namespaces; the veths and iptables
	// chains inside them, as "namespace/name" and "namespace table/chain",
	// go with them.
	Namespaces []string
	Veths      []string
	Chains     []string
	// Units are the lab's systemd scopes that systemd still runs.
	Units []string
	// Cgroups are the lab's cgroup directories that exist.
	Cgroups []string
	// Files are its state directory and supervisor log, when present.
	Files []string
}

// Lines describes the removal, one item a line ("netns mb-app", ...).
func (r Removal) Lines() []string {
	var out []string
	if r.Supervisor != 0 {
		out = append(out, fmt.Sprintf("supervisor pid %d", r.Supervisor))
	}
	add := func(kind string, items []string) {
		for _, it := range items {
			out = append(out, kind+" "+it)
		}
	}
	add("process", r.Processes)
	add("netns", r.Namespaces)
	add("veth", r.Veths)
	add("iptables-chain", r.Chains)
	add("unit", r.Units)
	add("cgroup", r.Cgroups)
	add("file", r.Files)
	return out
}

// Inventory lists what Teardown with the same options would remove,
// without removing or stopping anything.
func Inventory(ctx context.Context, o TeardownOptions) (Removal, error) {
	return realHost().inventory(ctx, o)
}

func (h host) inventory(ctx context.Context, o TeardownOptions) (Removal, error) {
	t, err := h.resolve(&o)
	if err != nil || t == nil {
		return Removal{}, err
	}
	r := Removal{Prefix: t.prefix}
	if t.state != nil && t.state.Supervisor && t.state.ownerAlive() {
		r.Supervisor = t.state.Owner
	}
	seen := map[string]bool{}
	units, err := scopes(ctx, h, t.cgs)
	if err != nil {
		return r, err
	}
	for _, u := range units {
		r.Units = append(r.Units, u.unit)
		if u.dir != "" {
			r.Cgroups = append(r.Cgroups, u.dir)
		}
	}
	for _, cg := range t.cgs {
		for _, top := range cg.hierarchies() {
			if seen[top] {
				continue
			}
			seen[top] = true
			if _, err := os.Stat(top); err != nil {
				continue
			}
			r.Cgroups = append(r.Cgroups, top)
			for _, pid := range pidsBelow(top) {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				r.Processes = append(r.Processes, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
			}
		}
	}
	slices.Sort(r.Processes)
	r.Processes = slices.Compact(r.Processes)
	names, err := listNetns(t.prefix)
	if err != nil {
		return r, err
	}
	r.Namespaces = names
	var errs []error
	for _, n := range names {
		veths, chains, err := netnsContents(ctx, n)
		errs = append(errs, err)
		r.Veths = append(r.Veths, veths...)
		r.Chains = append(r.Chains, chains...)
	}
	if o.StateDir != "" {
		for _, f := range []string{o.StateDir, SupervisorLog(o.StateDir)} {
			if _, err := os.Stat(f); err == nil {
				r.Files = append(r.Files, f)
			}
		}
	}
	return r, errors.Join(errs...)
}

// netnsContents lists the veths and the user-defined iptables chains of a
// network namespace.
func netnsContents(ctx context.Context, name string) (veths, chains []string, err error) {
	h, err := handleAt(name)
	if err != nil {
		return nil, nil, err
	}
	links, err := h.LinkList()
	h.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("list links in %s: %w", name, err)
	}
	for _, l := range links {
		if l.Type() == "veth" {
			veths = append(veths, name+"/"+l.Attrs().Name)
		}
	}
	var out []byte
	err = inNetns(name, func() error {
		var err error
		out, err = exec.CommandContext(ctx, "iptables-save").Output()
		return err
	})
	if err != nil {
		return veths, nil, fmt.Errorf("iptables-save in %s: %w", name, err)
	}
	return veths, userChains(name, string(out)), nil
}

// userChains returns the user-defined chains of iptables-save output (a
// built-in chain has a policy, a user-defined one "-"), as
// "namespace table/chain".
func userChains(netnsName, save string) []string {
	var out []string
	table := ""
	for _, line := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table = strings.TrimPrefix(line, "*")
		case strings.HasPrefix(line, ":"):
			f := strings.Fields(strings.TrimPrefix(line, ":"))
			if len(f) >= 2 && f[1] == "-" {
				out = append(out, netnsName+" "+table+"/"+f[0])
			}
		}
	}
	return out
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
// namespaces, cgroups, systemd scope and state directory. Each step runs
// even when an earlier one failed.
func removeAll(ctx context.Context, h host, prefix, stateDir string, cgs []cgroups, log *slog.Logger) error {
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
	if err := stopScopes(ctx, h, cgs); err != nil {
		errs = append(errs, err)
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
			pids = append(pids, killTree(t)...)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("lab processes still alive after SIGKILL: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scope is a lab's systemd scope that systemd still runs, and its cgroup
// directory ("" when systemd has removed it already).
type scope struct{ unit, dir string }

// scopes asks systemd which of the lab's scopes it still runs.
func scopes(ctx context.Context, h host, cgs []cgroups) ([]scope, error) {
	var units []string
	for _, cg := range cgs {
		if cg.Unit != "" && !slices.Contains(units, cg.Unit) {
			units = append(units, cg.Unit)
		}
	}
	if len(units) == 0 {
		return nil, nil
	}
	sd, err := h.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (the lab's scope %s)", err, strings.Join(units, ", "))
	}
	defer sd.Close()
	var out []scope
	for _, u := range units {
		rel, err := sd.ScopeCgroup(ctx, u)
		if err != nil {
			return out, err
		}
		if rel == "" {
			continue
		}
		s := scope{unit: u, dir: filepath.Join(h.cgroupRoot, rel)}
		if _, err := os.Stat(s.dir); err != nil {
			s.dir = ""
		}
		out = append(out, s)
	}
	return out, nil
}

// stopScopes stops the lab's systemd scopes, which kills the holder and
// whatever else is left in them, and removes what systemd left of their
// cgroups: the lab created them (through systemd) and nothing else is in
// them. A scope systemd already removed is stopped.
func stopScopes(ctx context.Context, h host, cgs []cgroups) error {
	var units, dirs []string
	for _, cg := range cgs {
		if cg.Unit != "" && !slices.Contains(units, cg.Unit) {
			units, dirs = append(units, cg.Unit), append(dirs, cg.Scope)
		}
	}
	if len(units) == 0 {
		return nil
	}
	sd, err := h.dial(ctx)
	if err != nil {
		return fmt.Errorf("%w; stop the lab's scope with systemctl stop %s", err, strings.Join(units, " "))
	}
	defer sd.Close()
	var errs []error
	for i, u := range units {
		if err := sd.StopUnit(ctx, u); err != nil {
			errs = append(errs, err)
			continue
		}
		if dirs[i] != "" {
			errs = append(errs, removeTree(dirs[i]))
		}
	}
	return errors.Join(errs...)
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
