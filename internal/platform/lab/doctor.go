package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
)

// Doctor checks, creating nothing that outlives it, what a study needs of
// this host to run on the lab: the host's kernel features and modules
// (loading those it can), cgroups and systemd's delegation, AppArmor,
// root and CPUs, no other lab on
// those CPUs, a hypervisor that leaves them to the study when they are
// busy (a second of load), Envoy at the version the data planes are written for (when
// the study installs a mesh), each Envoy release its meshes name, the
// containers' open-file limit, and free disk for the lab's state and the results. self names
// the caller's own lab, which is not counted as another.
func Doctor(ctx context.Context, n platform.Needs, self string) []platform.Finding {
	var cpus []string
	for _, node := range n.Nodes {
		cpus = append(cpus, node.CPUs)
	}
	out := cluster.HostFindings(ctx, cpus)
	envoy, _ := dataplane.FindEnvoy() // missing: the envoy check says so
	out = append(out, cluster.AppArmorFinding(envoy))
	out = append(out, cluster.BusyFinding(cluster.DefaultStateRoot, self, cpus, n.SharedHost))
	out = append(out, cluster.ContentionFinding(ctx, cpus, n.SharedHost))
	if n.Meshes() {
		out = append(out, envoyFinding(ctx, envoyVersionTimeout))
	}
	for _, v := range n.ProxyVersions {
		out = append(out, envoyReleaseFinding(ctx, v))
	}
	out = append(out, cluster.FileLimitFinding())
	out = append(out, stateDiskFinding(cluster.DefaultStateRoot, stateNeed(n)))
	if n.Meshes() {
		out = append(out, uidFinding("/etc/passwd", "/proc", proxyUser))
	}
	if n.Istiod {
		out = append(out, uidFinding("/etc/passwd", "/proc", controlPlaneUser))
	}
	out = append(out, uidFinding("/etc/passwd", "/proc", appUser))
	return append(out, platform.DiskFinding(n.ResultsDir, platform.MinFreeDisk))
}

// MinFreeState is the free space a lab wants for its state directory:
// proxy files and sockets, the pods' live logs, and the HBONE logs, each
// at most 16 MiB with access logs on.
const MinFreeState = 128 << 20

// stateNeed is the free space a study's lab wants for its state: with
// control_plane istiod, also what the local API server's etcd may take
// there (its quota and write-ahead logs).
func stateNeed(n platform.Needs) uint64 {
	need := uint64(MinFreeState)
	if n.Istiod {
		need += uint64(dataplane.IstiodStateBound)
	}
	return need
}

// stateDiskFinding checks the free space where the lab keeps its state
// (under /run: a tmpfs the host's services share, on most hosts).
func stateDiskFinding(root string, need uint64) platform.Finding {
	return platform.SpaceFinding("state-disk", root, need, "make "+root+" a directory on a mounted file system",
		"free space under "+root+" (on a tmpfs, grow it: mount -o remount,size=<more> /run)")
}

// envoyFinding finds Envoy as the data planes will and runs it once,
// within timeout.
func envoyFinding(ctx context.Context, timeout time.Duration) platform.Finding {
	f := platform.Finding{Check: "envoy"}
	fix := fmt.Sprintf("run scripts/setup.sh (Envoy %s into .venv), or set %s to an Envoy %s binary",
		dataplane.ExpectedEnvoy, dataplane.EnvoyEnv, dataplane.ExpectedEnvoy)
	bin, err := dataplane.FindEnvoy()
	if err != nil {
		f.Detail, f.Fix = strings.TrimPrefix(err.Error(), "envoy: "), fix
		if errors.As(err, new(*hostsafe.UntrustedError)) {
			f.Fix = hostsafe.Fix + ", or set " + dataplane.EnvoyEnv + " to an Envoy only root can change"
		}
		return f
	}
	if err := dataplane.CheckUnprivileged(bin); err != nil {
		f.Detail = err.Error()
		f.Fix = "use an Envoy binary that gains no privileges when it runs (chmod u-s,g-s; setcap -r), or a copy of it without them, in " + dataplane.EnvoyEnv
		return f
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := dataplane.EnvoyVersion(vctx, bin)
	switch {
	case vctx.Err() != nil && ctx.Err() == nil:
		f.Detail = fmt.Sprintf("%s did not answer --version within %s", bin, timeout)
		f.Fix = "if the host is this slow (an emulated or overloaded machine), run the study when it is quieter; if Envoy hangs, " + fix
	case err != nil:
		f.Detail, f.Fix = fmt.Sprintf("%s does not run: %v", bin, err), fix
	case !strings.HasPrefix(v, dataplane.ExpectedEnvoy+"."):
		f.Detail, f.Fix = fmt.Sprintf("%s is Envoy %s; the lab's data planes are written for %s", bin, v, dataplane.ExpectedEnvoy), fix
	default:
		f.Detail, f.Fix = proxyReach(bin)
		if f.Detail == "" {
			f.OK, f.Detail = true, fmt.Sprintf("Envoy %s at %s", v, bin)
		}
	}
	return f
}

// envoyReleaseFinding checks that the Envoy release a mesh names
// (proxy_version) is installed and runs; the fix installs it.
func envoyReleaseFinding(ctx context.Context, version string) platform.Finding {
	f := platform.Finding{Check: "envoy " + version}
	vctx, cancel := context.WithTimeout(ctx, 2*envoyVersionTimeout)
	defer cancel()
	bin, _, err := dataplane.EnvoyFor(vctx, version)
	switch {
	case errors.Is(err, dataplane.ErrReleaseMissing):
		f.Detail, f.Fix = fmt.Sprintf("a mesh names Envoy %s (proxy_version); it is not the default Envoy and is %v", version, dataplane.ErrReleaseMissing), dataplane.InstallCommand(version)
		return f
	case err != nil:
		f.Detail, f.Fix = err.Error(), dataplane.InstallCommand(version)
		return f
	}
	if err := dataplane.CheckUnprivileged(bin); err != nil {
		f.Detail, f.Fix = err.Error(), "reinstall it with "+dataplane.InstallCommand(version)+", or drop its privileges (chmod u-s,g-s; setcap -r)"
		return f
	}
	if f.Detail, f.Fix = proxyReach(bin); f.Detail == "" {
		f.OK, f.Detail = true, fmt.Sprintf("Envoy %s at %s", version, bin)
	}
	return f
}

// proxyReach says what keeps the proxies' user from Envoy at bin, with
// its fix, or nothing. That user checks each role's configuration with
// Envoy by its path: a checkout in a home directory that is 0700, as
// Debian 12 makes them, runs Envoy as root in doctor and fails at the
// first install.
func proxyReach(bin string) (detail, fix string) {
	d, err := dataplane.ClosedAbove(bin)
	switch {
	case err != nil:
		return err.Error(), "give " + dataplane.EnvoyEnv + " an absolute path to Envoy"
	case d != "":
		return fmt.Sprintf("%s is not reachable by the proxies' user %d: directory %s is not traversable by other users", bin, dataplane.ProxyUID, d),
			fmt.Sprintf("chmod o+x %s, or put Envoy under directories with o+x (mode 0755)", d)
	}
	return "", ""
}

// labUser is a UID the lab runs containers as, and what sharing it with
// another of the host's processes would expose.
type labUser struct {
	check, who, risk string
	uid              int
}

var (
	proxyUser = labUser{check: "proxy-uid", who: "the proxies", uid: dataplane.ProxyUID,
		risk: "it could read the proxies' keys and signal them"}
	appUser = labUser{check: "app-uid", who: "the apps and load generators", uid: AppUID,
		risk: "it could signal or trace the apps"}
	controlPlaneUser = labUser{check: "control-plane-uid", who: "the control-plane processes", uid: localkube.UID,
		risk: "it could read the local API server's keys and signal istiod"}
)

// uidFinding warns when a UID the lab runs containers as is not free on
// this host: a user in passwd has it, or a process runs as it. Such a
// process shares the containers' files and may signal them.
func uidFinding(passwd, proc string, u labUser) platform.Finding {
	uid := u.uid
	f := platform.Finding{Check: u.check, Advisory: true}
	var users []string
	if b, err := os.ReadFile(passwd); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if fs := strings.Split(line, ":"); len(fs) > 2 && fs[2] == strconv.Itoa(uid) {
				users = append(users, fs[0])
			}
		}
	}
	var pids []string
	statuses, _ := filepath.Glob(filepath.Join(proc, "[0-9]*", "status"))
	for _, st := range statuses {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if ids, ok := strings.CutPrefix(line, "Uid:"); ok && slices.Contains(strings.Fields(ids), strconv.Itoa(uid)) {
				pids = append(pids, filepath.Base(filepath.Dir(st)))
			}
		}
	}
	switch {
	case len(users) == 0 && len(pids) == 0:
		f.OK, f.Detail = true, fmt.Sprintf("UID %d (%s' user) is free", uid, u.who)
		return f
	case len(users) > 0:
		f.Detail = fmt.Sprintf("UID %d, which %s run as, is user %s", uid, u.who, strings.Join(users, ", "))
	default:
		f.Detail = fmt.Sprintf("UID %d, which %s run as, runs processes %s", uid, u.who, strings.Join(pids, ", "))
	}
	if len(users) > 0 && len(pids) > 0 {
		f.Detail += fmt.Sprintf(", running processes %s", strings.Join(pids, ", "))
	}
	f.Fix = "stop what runs as that user, or give it another UID: " + u.risk
	return f
}
