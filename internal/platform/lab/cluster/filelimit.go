package cluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/platform"
)

// runtimeFileLimit is the open-file limit a container runtime gives its
// containers: containerd and Docker set RLIMIT_NOFILE to 1048576, soft
// and hard, where the kernel allows it. A connection search holds tens of
// thousands of connections in one generator and one proxy, each a
// descriptor.
const runtimeFileLimit = 1 << 20

// FileLimit is the open-file limit (RLIMIT_NOFILE) every container starts
// with, soft and hard, and why it is that: runtimeFileLimit, bounded by
// the kernel's fs.nr_open; or, where this process may not raise a hard
// limit (it lacks CAP_SYS_RESOURCE, as in sandboxes that drop it from
// every process's bounding set), its own hard limit, which then bounds
// the connections a generator or a proxy can hold. The shim sets it
// before it execs the container's command: Go's os/exec would otherwise
// give every child the soft limit this process started with (often
// 1024), and only Go programs raise their own.
func FileLimit() (limit uint64, why string, err error) {
	var cur unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &cur); err != nil {
		return 0, "", fmt.Errorf("read the open-file limit: %w", err)
	}
	want := uint64(runtimeFileLimit)
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < want {
			want = n
		}
	}
	if want <= cur.Max {
		return want, "as a container runtime gives", nil
	}
	if !canRaiseLimits() {
		return cur.Max, fmt.Sprintf("meshbench's own hard limit: without CAP_SYS_RESOURCE it cannot raise it to %d", want), nil
	}
	return want, "as a container runtime gives", nil
}

// FileLimitFinding says what open-file limit containers will start with:
// advisory, as only a search over tens of thousands of connections needs
// more than a host's usual hard limit, and such a search reports the
// generator's limit as the generator's.
func FileLimitFinding() platform.Finding {
	f := platform.Finding{Check: "open-files", Advisory: true}
	limit, why, err := FileLimit()
	switch {
	case err != nil:
		f.Detail = err.Error()
	case limit < runtimeFileLimit && strings.Contains(why, "CAP_SYS_RESOURCE"):
		f.Detail = fmt.Sprintf("containers start with %d open files, %s: a generator or a proxy holds at most about that many connections", limit, why)
		f.Fix = "run meshbench with CAP_SYS_RESOURCE, or raise its hard limit (ulimit -Hn) before it starts"
	default:
		f.OK, f.Detail = true, fmt.Sprintf("containers start with %d open files, %s", limit, why)
	}
	return f
}

// canRaiseLimits says whether this process holds CAP_SYS_RESOURCE, which
// raising a hard limit takes, even as root.
func canRaiseLimits() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_RESOURCE/32].Effective&(1<<(unix.CAP_SYS_RESOURCE%32)) != 0
}
