package cluster

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"

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

// withDefaults validates the config and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Prefix == "" {
		c.Prefix = "mb"
	}
	if !prefixRE.MatchString(c.Prefix) {
		return c, fmt.Errorf("lab prefix %q: want 1 to 8 lower-case letters or digits", c.Prefix)
	}
	if c.Name == "" {
		c.Name = c.Prefix
	}
	if !nameRE.MatchString(c.Name) {
		return c, fmt.Errorf("lab name %q: want lower-case letters, digits and dashes", c.Name)
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
