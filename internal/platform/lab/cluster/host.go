package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// host is where the lab finds what it needs of the machine: the cgroup
// file systems, systemd, the kernel's modules and AppArmor. realHost is
// this machine; tests build one on a fake tree, with a fake systemd and
// module loader.
type host struct {
	cgroupRoot string // the cgroup mount point, /sys/fs/cgroup
	// systemdDir exists when systemd is the init system (sd_booted(3)).
	systemdDir string
	pid1Comm   string // /proc/1/comm, which names the init system in messages
	dial       func(context.Context) (systemd, error)

	release     string // the running kernel's release, uname -r
	procModules string // absent on a kernel built without loadable modules
	moduleDir   string // /lib/modules/<release>
	// modprobe loads a module and what it depends on, returning its output.
	modprobe func(ctx context.Context, name string) ([]byte, error)

	apparmorEnabled  string // "Y" when the kernel enforces AppArmor
	apparmorProfiles string // the loaded profiles, "name (mode)" a line
	selfLabel        string // this process's AppArmor label
}

func realHost() host {
	var u unix.Utsname
	_ = unix.Uname(&u)
	rel := unix.ByteSliceToString(u.Release[:])
	return host{
		cgroupRoot:       cgroupRoot,
		systemdDir:       "/run/systemd/system",
		pid1Comm:         "/proc/1/comm",
		dial:             dialSystemd,
		release:          rel,
		procModules:      "/proc/modules",
		moduleDir:        filepath.Join("/lib/modules", rel),
		modprobe:         runModprobe,
		apparmorEnabled:  "/sys/module/apparmor/parameters/enabled",
		apparmorProfiles: "/sys/kernel/security/apparmor/profiles",
		selfLabel:        "/proc/self/attr/current",
	}
}

// runModprobe runs kmod's modprobe, which finds a module's file and its
// dependencies in the running kernel's modules directory, compressed or
// not, as no finit_module of our own would without redoing its work.
func runModprobe(ctx context.Context, name string) ([]byte, error) {
	path, err := exec.LookPath("modprobe")
	if err != nil {
		return nil, errNoModprobe
	}
	return exec.CommandContext(ctx, path, name).CombinedOutput()
}

// cgroupMode is how the host mounts cgroups.
type cgroupMode string

const (
	cgroupV1     cgroupMode = "v1"     // legacy: every controller in a v1 hierarchy
	cgroupHybrid cgroupMode = "hybrid" // v1 controllers, and a v2 tree with none of them (systemd's hybrid, or this project's hosts)
	cgroupV2     cgroupMode = "v2"     // unified: one v2 tree with every controller
)

func (h host) cgroupMode() cgroupMode {
	if fileExists(filepath.Join(h.cgroupRoot, "cgroup.controllers")) {
		return cgroupV2
	}
	if fileExists(filepath.Join(h.cgroupRoot, "unified", "cgroup.controllers")) {
		return cgroupHybrid
	}
	return cgroupV1
}

// systemdBooted says whether systemd is the init system, as sd_booted(3)
// decides it.
func (h host) systemdBooted() bool {
	fi, err := os.Stat(h.systemdDir)
	return err == nil && fi.IsDir()
}

// initName is PID 1's command name, for messages.
func (h host) initName() string {
	b, err := os.ReadFile(h.pid1Comm)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
