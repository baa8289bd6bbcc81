package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Privileges is what /proc/PID/status says a process may do.
type Privileges struct {
	UID, GID                   string // real, effective, saved and file-system IDs
	Effective, Permitted       uint64 // capability sets, bit N for capability N
	Bounding, Ambient, Inherit uint64
	NoNewPrivs                 bool
}

// Capability numbers the lab's tests name (linux/capability.h).
const (
	CapNetBindService = 10
	CapNetAdmin       = 12
	CapNetRaw         = 13
)

// ProcPrivileges reads a running process's IDs and capability sets.
func ProcPrivileges(t testing.TB, pid int) Privileges {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var p Privileges
	caps := map[string]*uint64{"CapEff": &p.Effective, "CapPrm": &p.Permitted, "CapBnd": &p.Bounding, "CapAmb": &p.Ambient, "CapInh": &p.Inherit}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch {
		case k == "Uid":
			p.UID = strings.Join(strings.Fields(v), " ")
		case k == "Gid":
			p.GID = strings.Join(strings.Fields(v), " ")
		case k == "NoNewPrivs":
			p.NoNewPrivs = v == "1"
		case caps[k] != nil:
			if *caps[k], err = strconv.ParseUint(v, 16, 64); err != nil {
				t.Fatalf("pid %d: %s: %v", pid, k, err)
			}
		}
	}
	return p
}

// Only reports whether the process holds exactly these capabilities in
// every set a running program uses (effective, permitted, bounding,
// ambient, inheritable), for a process that is not root.
func (p Privileges) Only(caps ...int) bool {
	var want uint64
	for _, c := range caps {
		want |= 1 << c
	}
	return p.Effective == want && p.Permitted == want && p.Bounding == want && p.Ambient == want && p.Inherit == want
}
