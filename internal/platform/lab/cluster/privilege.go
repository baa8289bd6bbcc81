package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// execFD is the descriptor a container that drops to another user gets
// its program on (the first of exec.Cmd's ExtraFiles).
const execFD = 3

// privilegeArgv is the command line that starts the container with its
// privileges and no more: the shim (root, so that it can join the
// cgroups) runs setpriv, which sets no_new_privs, limits the bounding,
// inheritable and ambient capability sets to Caps, switches to UID:GID
// without supplementary groups, and execs the command.
//
// A container that is not root gets its program as an open descriptor
// (exe, opened here as root) and execs /proc/self/fd/3: the program's
// directories need not be open to its user (a meshbench binary under
// /root/go/bin runs as an unprivileged app), only the file's own execute
// bit. Files the program opens by path must still be reachable.
func (cs ContainerSpec) privilegeArgv() (argv []string, exe *os.File, err error) {
	if len(cs.Command) == 0 {
		return nil, nil, fmt.Errorf("container %s has no command", cs.Name)
	}
	caps := "-all"
	for _, c := range cs.Caps {
		if !validCap(c) {
			return nil, nil, fmt.Errorf("container %s: capability %q is not a lower-case name without cap_ (net_admin)", cs.Name, c)
		}
		caps += ",+" + c
	}
	argv = []string{"/bin/sh", "-c", shimScript, "meshbench-shim", "setpriv", "--no-new-privs",
		"--bounding-set=" + caps, "--inh-caps=" + caps}
	cmd := cs.Command
	if cs.UID != 0 || cs.GID != 0 {
		path, err := exec.LookPath(cs.Command[0])
		if err != nil {
			return nil, nil, fmt.Errorf("container %s: %w", cs.Name, err)
		}
		exe, err = os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("container %s: %w", cs.Name, err)
		}
		// Ambient capabilities are the only ones that survive an exec by
		// a user other than root. The kernel clears the parent-death
		// signal when credentials change, so setpriv sets it again.
		argv = append(argv, "--ambient-caps="+caps, "--reuid="+strconv.Itoa(cs.UID), "--regid="+strconv.Itoa(cs.GID),
			"--clear-groups", "--pdeathsig=KILL")
		cmd = append([]string{"/proc/self/fd/" + strconv.Itoa(execFD)}, cs.Command[1:]...)
	}
	argv = append(argv, "--")
	return append(argv, cmd...), exe, nil
}

// validCap accepts the capability names setpriv takes, so that a spec
// cannot smuggle "all" or another option into its argument.
func validCap(c string) bool {
	if c == "" || c == "all" || strings.HasPrefix(c, "cap_") {
		return false
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}
