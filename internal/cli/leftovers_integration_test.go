package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
)

// The checks that a lab left nothing behind. They look at the host as a
// user's tools would, not through the lab's own inventory (whose gaps
// would hide what they miss), and hold on any host: cgroup v1 or v2, with
// systemd as PID 1 or without it.

// hostState is what a lab could leave outside its own network namespaces:
// veths and firewall rules in the host's namespace, and systemd units. A
// test takes it before its runs, and assertNothingLeft reports what was
// added since.
type hostState struct {
	veths, rules, units []string
}

func snapshotHost(t *testing.T) hostState {
	t.Helper()
	return hostState{veths: hostVeths(t), rules: hostRules(t), units: systemdUnits(t)}
}

// labMatcher matches a lab's name as a whole word: lab mbr1a's traces are
// "mbr1a-lab" or "mbr1a-n-app", never lab mbr1a2's.
func labMatcher(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^a-z0-9])` + regexp.QuoteMeta(name) + `([^a-z0-9]|$)`)
}

// assertNoProcesses waits a little for the parent-death signal to end
// every process of the lab: none may outlive the run.
func assertNoProcesses(t *testing.T, name string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		left = labProcesses(name)
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("processes of lab %s outlived the killed run: %v", name, left)
}

// labProcesses lists the processes in a cgroup named after the lab (its
// directories, or a systemd unit of its own), as "pid cmd".
func labProcesses(name string) []string {
	re := labMatcher(name)
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !re.Match(b) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		out = append(out, filepath.Base(filepath.Dir(p))+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// assertNothingLeft checks that no network namespace or mount, process,
// cgroup (in any hierarchy, at any depth), systemd unit, state or log file
// of the lab is left, and that no veth, iptables or nftables rule or
// systemd unit appeared in the host's own namespace since h was taken.
// The lab's veths and rules live in its namespaces, which go with them.
func (h hostState) assertNothingLeft(t *testing.T, name string) {
	t.Helper()
	re := labMatcher(name)
	if ns, _ := filepath.Glob("/run/netns/" + name + "-*"); len(ns) > 0 {
		t.Errorf("network namespaces left: %v", ns)
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(mi), "\n") {
			if re.MatchString(l) {
				t.Errorf("mount left: %s", l)
			}
		}
	}
	if p := labProcesses(name); len(p) > 0 {
		t.Errorf("processes left: %v", p)
	}
	if cgs := cgroupsNamed(re); len(cgs) > 0 {
		t.Errorf("cgroups left: %v", cgs)
	}
	if f, _ := filepath.Glob(filepath.Join(cluster.DefaultStateRoot, name+"*")); len(f) > 0 {
		t.Errorf("state or temporary files left: %v", f)
	}
	if v := added(h.veths, hostVeths(t)); len(v) > 0 {
		t.Errorf("veths left in the host's network namespace: %v", v)
	}
	if r := added(h.rules, hostRules(t)); len(r) > 0 {
		t.Errorf("firewall rules left in the host's network namespace:\n%s", strings.Join(r, "\n"))
	}
	var units []string
	for _, u := range added(h.units, systemdUnits(t)) {
		// Units come and go on a running system (timers, sessions); the
		// lab's carry its name or meshbench's.
		if re.MatchString(u) || strings.Contains(u, "meshbench") {
			units = append(units, u)
		}
	}
	if len(units) > 0 {
		t.Errorf("systemd units left: %v", units)
	}
}

// cgroupsNamed walks every cgroup hierarchy for directories whose name
// matches re.
func cgroupsNamed(re *regexp.Regexp) []string {
	var out []string
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a cgroup removed during the walk
		}
		if d.IsDir() && re.MatchString(d.Name()) {
			out = append(out, p)
			return fs.SkipDir
		}
		return nil
	})
	return out
}

// hostVeths lists the veths in this process's network namespace.
func hostVeths(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ip", "-o", "link", "show", "type", "veth").Output()
	if err != nil {
		t.Fatalf("ip link show type veth: %v", err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			names = append(names, name)
		}
	}
	return names
}

// counters are the packet and byte counts in iptables-save and nft
// output, which change with traffic, not with rules.
var counters = regexp.MustCompile(`\[\d+:\d+\]|packets \d+ bytes \d+`)

// hostRules lists the iptables (IPv4 and IPv6) and nftables rules of this
// process's network namespace, a line each, without counters.
func hostRules(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, c := range [][]string{{"iptables-save"}, {"ip6tables-save"}, {"nft", "list", "ruleset"}} {
		var stderr bytes.Buffer
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(c, " "), err, stderr.Bytes())
		}
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			lines = append(lines, c[0]+": "+counters.ReplaceAllString(l, ""))
		}
	}
	return lines
}

// systemdUnits lists every unit systemd has loaded, when systemd is PID 1.
func systemdUnits(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return nil
	}
	out, err := exec.Command("systemctl", "list-units", "--all", "--plain", "--no-legend", "--no-pager").Output()
	if err != nil {
		t.Fatalf("systemctl list-units: %v", err)
	}
	var units []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			units = append(units, f[0])
		}
	}
	return units
}

// added lists what is in after and not in before.
func added(before, after []string) []string {
	var out []string
	for _, x := range after {
		if !slices.Contains(before, x) {
			out = append(out, x)
		}
	}
	return out
}
