package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/meshbench/meshbench/internal/cpstudy/leftover"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// The functions below manage a lab by its name from outside the process
// that runs it, for `meshbench lab`, so that no caller outside the lab
// provider reaches into its cluster package.

// CheckName refuses a lab name that is not one: lower-case letters,
// digits and dashes; never a path such as "..".
func CheckName(name string) error { return cluster.CheckName(name) }

// stateDir is where the lab named name keeps its state; a name that is
// not a lab's (a path such as "..") is refused.
func stateDir(name string) (string, error) {
	if err := cluster.CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(cluster.DefaultStateRoot, name), nil
}

// Status writes the state of the lab named name to w.
func Status(ctx context.Context, name string, w io.Writer) error {
	dir, err := stateDir(name)
	if err != nil {
		return err
	}
	return cluster.Status(ctx, dir, w)
}

// Exec runs argv inside a pod's (or, as "node/NAME", a node's) network
// namespace of the lab named name, with the Services' environment.
func Exec(ctx context.Context, name, target string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	dir, err := stateDir(name)
	if err != nil {
		return err
	}
	return cluster.Exec(ctx, cluster.ExecOptions{StateDir: dir, Target: target, Argv: argv,
		Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// Teardown removes every process, namespace, cgroup and rule of the lab
// named name, even after a crash; prefix, when set, also finds leftovers
// whose state is gone.
func Teardown(ctx context.Context, name, prefix string, log *slog.Logger) error {
	return cluster.Teardown(ctx, cluster.TeardownOptions{Name: name, Prefix: prefix, Logger: log})
}

// Inventory lists what Teardown with the same name and prefix would
// remove, an item a line ("netns mb-app"), and removes nothing.
func Inventory(ctx context.Context, name, prefix string) ([]string, error) {
	r, err := cluster.Inventory(ctx, cluster.TeardownOptions{Name: name, Prefix: prefix})
	return r.Lines(), err
}

// InventoryAll lists, per lab ("lab NAME") and per killed control-plane
// study ("control-plane study pid N"), what TeardownAll would remove, and
// removes nothing: the lab `lab up` made, every lab whose owner is gone,
// and what each control-plane study killed outright left.
func InventoryAll(ctx context.Context) (map[string][]string, error) {
	return inventoryAll(ctx, cluster.DefaultStateRoot)
}

func inventoryAll(ctx context.Context, root string) (map[string][]string, error) {
	out := map[string][]string{}
	var errs []error
	if st, err := cluster.ReadState(filepath.Join(root, DefaultName)); err == nil && st.Supervisor {
		r, err := cluster.Inventory(ctx, cluster.TeardownOptions{Name: DefaultName, StateDir: filepath.Join(root, DefaultName)})
		errs = append(errs, err)
		out["lab "+DefaultName] = r.Lines()
	}
	others, err := cluster.Others(root, "")
	errs = append(errs, err)
	for _, o := range others {
		if o.OwnerAlive {
			continue
		}
		r, err := cluster.Inventory(ctx, cluster.TeardownOptions{Name: o.Name, StateDir: o.StateDir})
		errs = append(errs, err)
		out["lab "+o.Name] = r.Lines()
	}
	studies, err := leftover.List(root)
	errs = append(errs, err)
	for _, f := range studies {
		out[studyName(f)] = f.Lines()
	}
	return out, errors.Join(errs...)
}

func studyName(f leftover.Found) string { return fmt.Sprintf("control-plane study pid %d", f.PID) }

// DefaultName is the name of a lab whose cluster file gives none, as
// `meshbench lab up` makes it.
const DefaultName = "mb"

// TeardownAll removes the lab `lab up` made, when it runs under its
// detached supervisor, every lab whose owner is gone (a run killed
// outright), and what a control-plane study killed outright left (its
// cgroups, with any process still in them, and its local control plane's
// directory), and describes each it removed. A lab or study whose owner
// still runs, such as another run's, is left alone.
func TeardownAll(ctx context.Context, log *slog.Logger) ([]string, error) {
	return teardownAll(ctx, cluster.DefaultStateRoot, log)
}

func teardownAll(ctx context.Context, root string, log *slog.Logger) ([]string, error) {
	var removed []string
	var errs []error
	if st, err := cluster.ReadState(filepath.Join(root, DefaultName)); err == nil && st.Supervisor {
		if err := cluster.Teardown(ctx, cluster.TeardownOptions{Name: DefaultName, StateDir: filepath.Join(root, DefaultName), Logger: log}); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, fmt.Sprintf("lab %s (started by lab up, supervisor pid %d)", DefaultName, st.Owner))
		}
	}
	orphans, err := cluster.TeardownOrphans(ctx, root, log)
	errs = append(errs, err)
	for _, o := range orphans {
		removed = append(removed, fmt.Sprintf("lab %s (owner pid %d gone, %d processes left)", o.Name, o.Owner, o.Procs))
	}
	studies, err := leftover.Remove(ctx, root, log)
	errs = append(errs, err)
	for _, f := range studies {
		removed = append(removed, fmt.Sprintf("%s (gone, %d processes left): %s", studyName(f), len(f.Processes), strings.Join(f.Present, ", ")))
	}
	return removed, errors.Join(errs...)
}
