package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// systemd is the part of systemd's D-Bus API the lab uses: transient scope
// units that hold the lab's cgroups on a cgroup v2 host. Tests use a fake.
type systemd interface {
	// Version is the manager's version, such as "252.33-1~deb12u1".
	Version(ctx context.Context) (string, error)
	// StartScope starts a transient scope unit in slice, with Delegate=yes,
	// holding the process pid; it waits for systemd to finish the job and
	// returns the scope's cgroup, relative to the cgroup root. A unit of
	// that name that exists already is ErrAlreadyUp.
	StartScope(ctx context.Context, unit, slice, description string, pid int) (string, error)
	// ScopeCgroup is a scope unit's cgroup relative to the cgroup root, or
	// "" when systemd has no such unit running.
	ScopeCgroup(ctx context.Context, unit string) (string, error)
	// StopUnit stops a unit, killing what is left in its cgroup, and waits;
	// a unit systemd does not know is already stopped.
	StopUnit(ctx context.Context, unit string) error
	Close()
}

// dialSystemd connects to systemd: through the system bus, or, as root
// on a host without a D-Bus daemon, its private socket.
func dialSystemd(ctx context.Context) (systemd, error) {
	c, err := sd.NewWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to systemd over D-Bus: %w", err)
	}
	return dbusSystemd{c}, nil
}

type dbusSystemd struct{ c *sd.Conn }

func (s dbusSystemd) Close() { s.c.Close() }

func (s dbusSystemd) Version(ctx context.Context) (string, error) {
	p, err := s.c.GetManagerProperty("Version")
	if err != nil {
		return "", fmt.Errorf("systemd version: %w", err)
	}
	return strings.Trim(p, `"`), nil
}

// The D-Bus errors systemd answers with.
const (
	errUnitExists = "org.freedesktop.systemd1.UnitExists"
	errNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"
)

func dbusErrorIs(err error, name string) bool {
	var e dbus.Error
	return errors.As(err, &e) && e.Name == name
}

func (s dbusSystemd) StartScope(ctx context.Context, unit, slice, description string, pid int) (string, error) {
	props := []sd.Property{
		sd.PropDescription(description),
		sd.PropSlice(slice),
		sd.PropPids(uint32(pid)),
		// The lab makes and owns the cgroups below the scope's.
		{Name: "Delegate", Value: dbus.MakeVariant(true)},
		// A lab of hundreds of Envoys and apps runs thousands of threads,
		// more than the default share of the pid space a unit may have.
		{Name: "TasksMax", Value: dbus.MakeVariant(uint64(math.MaxUint64))},
		// A scope stopped with its processes killed may end "failed";
		// it goes all the same, leaving no unit to reset.
		{Name: "CollectMode", Value: dbus.MakeVariant("inactive-or-failed")},
	}
	done := make(chan string, 1)
	if _, err := s.c.StartTransientUnitContext(ctx, unit, "fail", props, done); err != nil {
		if dbusErrorIs(err, errUnitExists) {
			return "", fmt.Errorf("%w: systemd unit %s exists", ErrAlreadyUp, unit)
		}
		return "", fmt.Errorf("systemd: start scope %s: %w", unit, err)
	}
	if err := waitJob(ctx, done, "start", unit); err != nil {
		return "", err
	}
	cg, err := s.ScopeCgroup(ctx, unit)
	if err == nil && cg == "" {
		err = fmt.Errorf("systemd: scope %s started but has no cgroup", unit)
	}
	return cg, err
}

func (s dbusSystemd) ScopeCgroup(ctx context.Context, unit string) (string, error) {
	st, err := s.c.ListUnitsByNamesContext(ctx, []string{unit})
	if err != nil {
		return "", fmt.Errorf("systemd: look up %s: %w", unit, err)
	}
	if len(st) == 0 || st[0].LoadState == "not-found" {
		return "", nil
	}
	p, err := s.c.GetUnitTypePropertyContext(ctx, unit, "Scope", "ControlGroup")
	if err != nil {
		if dbusErrorIs(err, errNoSuchUnit) {
			return "", nil
		}
		return "", fmt.Errorf("systemd: cgroup of %s: %w", unit, err)
	}
	cg, _ := p.Value.Value().(string)
	return cg, nil
}

func (s dbusSystemd) StopUnit(ctx context.Context, unit string) error {
	done := make(chan string, 1)
	if _, err := s.c.StopUnitContext(ctx, unit, "replace", done); err != nil {
		if dbusErrorIs(err, errNoSuchUnit) {
			return nil
		}
		return fmt.Errorf("systemd: stop %s: %w", unit, err)
	}
	return waitJob(ctx, done, "stop", unit)
}

// waitJob waits for a job's result: "done", or why it did not finish.
func waitJob(ctx context.Context, done <-chan string, what, unit string) error {
	select {
	case r := <-done:
		if r != "done" {
			return fmt.Errorf("systemd: %s %s: job %s", what, unit, r)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("systemd: %s %s: %w", what, unit, ctx.Err())
	}
}
