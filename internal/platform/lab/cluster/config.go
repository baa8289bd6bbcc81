package cluster

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// Config says what lab to bring up.
type Config struct {
	// Name identifies the lab; its state lives in StateDir.
	Name string
	// Prefix starts the name of every namespace and cgroup the lab makes:
	// 1 to 8 lower-case letters or digits. Default "mb".
	Prefix string
	// StateDir holds PIDs, the cluster model and pod logs. Default
	// /run/meshbench/<Name>.
	StateDir string
	// KeepLogDir, when set, is where Down leaves a copy of every pod's
	// log (cut to about 1 MiB each) before it removes the state
	// directory, for example a results directory's.
	KeepLogDir confined.Dir
	Nodes      []NodeConfig
	Logger     *slog.Logger
	// Runner runs external commands (iptables-restore); nil means the
	// real one.
	Runner Runner
	// Supervisor marks the owning process as a detached supervisor that
	// Teardown may stop (meshbench lab up); an in-process owner such as
	// meshbench run is left alone.
	Supervisor bool

	// host is the machine's cgroups, systemd and modules; nil means this
	// one. Tests give a fake.
	host *host
}

// NodeConfig is one node.
type NodeConfig struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// CPUs pins every process of the node to a CPU list such as "1" or
	// "0-1"; empty means unpinned.
	CPUs string `json:"cpus,omitempty"`
}

// DefaultStateRoot is where labs keep their state directories.
const DefaultStateRoot = "/run/meshbench"

var (
	prefixRE = regexp.MustCompile(`^[a-z0-9]{1,8}$`)
	// Names become parts of namespace, cgroup and interface names.
	nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)
	// A pod's sysctl names a file under /proc/sys/net, and nothing else.
	sysctlRE = regexp.MustCompile(`^net(\.[a-z0-9_]+)+$`)
)

// runtimePrefixes are the names container runtimes and network plugins
// start their own network namespaces under /run/netns with (containerd's
// CNI "cni-<id>", podman's "netns-<id>") or could: a lab with one of these
// prefixes would be taken for theirs, and theirs for the lab's.
var runtimePrefixes = []string{"cni", "netns", "docker", "podman", "crio", "k8s", "kube", "kubelet",
	"cilium", "calico", "flannel", "weave", "lxc", "lxd", "incus", "ovn", "ovs", "istio", "linkerd", "ztunnel"}

// CheckPrefix refuses a prefix that is not 1 to 8 lower-case letters or
// digits, or that a container runtime uses. Every caller that takes a
// prefix from a user or a file checks it, before anything is named after it.
func CheckPrefix(prefix string) error {
	if !prefixRE.MatchString(prefix) {
		return fmt.Errorf("lab prefix %q: want 1 to 8 lower-case letters or digits", prefix)
	}
	if slices.Contains(runtimePrefixes, prefix) {
		return fmt.Errorf("lab prefix %q: a container runtime names its own network namespaces so; choose another prefix", prefix)
	}
	return nil
}

// CheckName refuses a lab name that is not lower-case letters, digits and
// dashes: it becomes a directory under the state root, so "..", "." or a
// name with a slash would name another directory.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: want lower-case letters, digits and dashes, such as mb", name)
	}
	return nil
}

// withDefaults validates the config and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Prefix == "" {
		c.Prefix = "mb"
	}
	if err := CheckPrefix(c.Prefix); err != nil {
		return c, err
	}
	if c.Name == "" {
		c.Name = c.Prefix
	}
	if err := CheckName(c.Name); err != nil {
		return c, err
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(DefaultStateRoot, c.Name)
	}
	if len(c.Nodes) == 0 {
		return c, fmt.Errorf("lab %s: no nodes: give at least one", c.Name)
	}
	if len(c.Nodes) > maxNodes {
		return c, fmt.Errorf("lab %s: %d nodes, at most %d", c.Name, len(c.Nodes), maxNodes)
	}
	seen := map[string]bool{}
	for i, n := range c.Nodes {
		if !nameRE.MatchString(n.Name) || len(n.Name) > 20 {
			return c, fmt.Errorf("node %d name %q: want up to 20 lower-case letters, digits and dashes", i, n.Name)
		}
		if seen[n.Name] {
			return c, fmt.Errorf("node name %q given twice", n.Name)
		}
		seen[n.Name] = true
		if n.CPUs != "" {
			if _, err := infra.ParseCPUList(n.CPUs); err != nil {
				return c, fmt.Errorf("node %s cpus: %w", n.Name, err)
			}
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Runner == nil {
		c.Runner = ExecRunner{}
	}
	return c, nil
}
