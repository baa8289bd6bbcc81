package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/platform"
)

// labPrograms are the programs the lab runs besides meshbench and Envoy:
// iptables for Services and traffic capture, ip for ambient's policy
// routes, the containers' shim and setpriv.
var labPrograms = []string{"iptables-restore", "iptables-save", "ip", "sh", "setpriv"}

// AppArmorFinding says whether AppArmor, on by default in Debian and
// Ubuntu, confines meshbench or names a program the lab runs (extra, such
// as Envoy, besides labPrograms and meshbench itself). A process is
// confined only by a profile that attaches to its program, and the lab's
// processes start unconfined from an unconfined meshbench; the lab makes
// its network namespaces itself (netlink and a bind mount under
// /run/netns), not through ip netns. What the check cannot see is a
// profile that attaches to one of those programs under another name.
func AppArmorFinding(extra ...string) platform.Finding {
	return realHost().apparmorFinding(extra)
}

func (h host) apparmorFinding(extra []string) platform.Finding {
	f := platform.Finding{Check: "apparmor"}
	if b, err := os.ReadFile(h.apparmorEnabled); err != nil || strings.TrimSpace(string(b)) != "Y" {
		f.OK, f.Detail = true, "AppArmor is not enabled"
		return f
	}
	self := "unknown"
	if b, err := os.ReadFile(h.selfLabel); err == nil {
		self = strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
	}
	if self != "unconfined" {
		f.Detail = fmt.Sprintf("meshbench runs confined by AppArmor as %q: its profile decides whether it may create network namespaces, cgroups and iptables rules, and it passes to every program the lab starts", self)
		f.Fix = "run meshbench unconfined (sudo aa-exec -p unconfined -- meshbench ...), or put its profile in complain mode (aa-complain)"
		return f
	}
	b, err := os.ReadFile(h.apparmorProfiles)
	if err != nil {
		f.Advisory = true
		f.Detail = fmt.Sprintf("AppArmor is enabled and meshbench runs unconfined, but the loaded profiles cannot be listed: %v", err)
		f.Fix = "mount securityfs (mount -t securityfs securityfs /sys/kernel/security) so that the check can see them"
		return f
	}
	var progs []string
	for _, p := range append(slices.Clone(labPrograms), extra...) {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			p = path
		}
		progs = append(progs, p)
	}
	if self, err := os.Executable(); err == nil {
		progs = append(progs, self)
	}
	// A profile is named by the path it attaches to, or by a name; match
	// both, and through symbolic links (iptables-restore is a link to
	// xtables-nft-multi on Debian).
	names := map[string]string{}
	for _, p := range progs {
		names[p], names[filepath.Base(p)] = p, p
		if real, err := filepath.EvalSymlinks(p); err == nil {
			names[real], names[filepath.Base(real)] = p, p
		}
	}
	var hits []string
	loaded := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, mode, ok := strings.Cut(strings.TrimSpace(line), " (")
		if !ok {
			continue
		}
		loaded++
		mode = strings.TrimSuffix(mode, ")")
		if p, ok := names[name]; ok && mode != "complain" && mode != "unconfined" {
			hits = append(hits, fmt.Sprintf("%s (%s) for %s", name, mode, p))
		}
	}
	if len(hits) > 0 {
		f.Detail = "AppArmor confines programs the lab runs: " + strings.Join(hits, "; ")
		f.Fix = "put those profiles in complain mode (aa-complain NAME) or disable them (aa-disable NAME) while the lab runs"
		return f
	}
	f.OK = true
	f.Detail = fmt.Sprintf("AppArmor is enabled (%d profiles loaded), meshbench runs unconfined, and no profile names a program the lab runs (%s): its processes run unconfined", loaded, strings.Join(baseNames(progs), ", "))
	return f
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}
