package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/infra"
	"sigs.k8s.io/yaml"
)

// ClusterFile is what `meshbench lab up -f FILE` reads: the lab's nodes
// and, optionally, a workload to deploy on them.
//
//	name: demo
//	nodes:
//	  - {name: app-1, role: app}
//	  - {name: load-1, role: load, cpus: "1"}
//	workload: {graph: tiered, namespaces: 1}
type ClusterFile struct {
	Name     string           `json:"name,omitempty"`
	Prefix   string           `json:"prefix,omitempty"`
	Nodes    []infra.NodeSpec `json:"nodes"`
	Workload *FileWorkload    `json:"workload,omitempty"`
}

// FileWorkload is a cluster file's workload.
type FileWorkload struct {
	// Graph is a built-in graph name or a graph file, relative to the
	// cluster file.
	Graph      string         `json:"graph"`
	Namespaces int            `json:"namespaces,omitempty"` // default 1
	Replicas   map[string]int `json:"replicas,omitempty"`
}

// LoadClusterFile reads and checks a cluster file.
func LoadClusterFile(path string) (ClusterFile, error) {
	var f ClusterFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("cluster file: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return f, fmt.Errorf("cluster file %s: %w", path, err)
	}
	if len(f.Nodes) == 0 {
		return f, fmt.Errorf("cluster file %s: nodes: give at least one node", path)
	}
	infra.NameNodes(f.Nodes)
	hasApp := false
	for i, n := range f.Nodes {
		switch n.Role {
		case infra.NodeApp:
			hasApp = true
		case infra.NodeLoad, infra.NodeMesh, infra.NodeIngress, infra.NodeClient:
		default:
			return f, fmt.Errorf("cluster file %s: nodes[%d].role %q: want app, load, mesh, ingress or client", path, i, n.Role)
		}
	}
	if w := f.Workload; w != nil {
		if !hasApp {
			return f, fmt.Errorf("cluster file %s: a workload needs a node with role app", path)
		}
		if w.Graph == "" {
			return f, errors.New("cluster file: workload.graph: give a built-in graph name or a file")
		}
		if w.Namespaces == 0 {
			w.Namespaces = 1
		}
		if w.Namespaces < 0 {
			return f, fmt.Errorf("cluster file %s: workload.namespaces must be positive", path)
		}
		if local := filepath.Join(filepath.Dir(path), w.Graph); !filepath.IsAbs(w.Graph) && fileExists(local) {
			w.Graph = local
		}
	}
	return f, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
