package cost

import (
	"fmt"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
)

// Component is one kind of pod a mesh adds.
type Component struct {
	Name string `json:"name"`
	// Replicas per instance (per cluster for the control plane, per
	// namespace for namespace components); default 1. Not used for
	// sidecars and per-node components.
	Replicas int `json:"replicas,omitempty"`
	// Requests are the pod's summed container requests.
	Requests Resources `json:"requests"`
}

func (c Component) replicas() int { return max(c.Replicas, 1) }

// Footprint is what one mesh adds to a cluster's resource requests.
type Footprint struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Sidecar is added to every application pod.
	Sidecar *Component `json:"sidecar,omitempty"`
	// PerNode are DaemonSets: one pod on every node, including the nodes
	// added to make room for them.
	PerNode []Component `json:"per_node,omitempty"`
	// ControlPlane pods run once per cluster.
	ControlPlane []Component `json:"control_plane,omitempty"`
	// PerNamespace pods run once in every application namespace, as
	// waypoints do.
	PerNamespace []Component `json:"per_namespace,omitempty"`
}

// Lines describes the footprint in one line per component.
func (f Footprint) Lines() []string { return scenario{f: f}.lines() }

// componentLines is one line per component; none for a mesh that adds
// nothing.
func (f Footprint) componentLines() []string {
	var out []string
	if f.Sidecar != nil {
		out = append(out, fmt.Sprintf("%s: %v added to every application pod", f.Sidecar.Name, f.Sidecar.Requests))
	}
	for _, c := range f.PerNode {
		out = append(out, fmt.Sprintf("%s: %v on every node", c.Name, c.Requests))
	}
	for _, c := range f.ControlPlane {
		out = append(out, fmt.Sprintf("%s: %v x %d per cluster", c.Name, c.Requests, c.replicas()))
	}
	for _, c := range f.PerNamespace {
		out = append(out, fmt.Sprintf("%s: %v x %d per namespace", c.Name, c.Requests, c.replicas()))
	}
	return out
}

func (f Footprint) validate() error {
	if f.Name == "" {
		return fmt.Errorf("mesh footprint without a name")
	}
	if f.Name == mesh.ProfileBaseline {
		return fmt.Errorf("mesh footprint %q: the name is reserved for the no-mesh scenario", mesh.ProfileBaseline)
	}
	all := append(append(append([]Component(nil), f.PerNode...), f.ControlPlane...), f.PerNamespace...)
	if f.Sidecar != nil {
		all = append(all, *f.Sidecar)
	}
	for _, c := range all {
		if c.Name == "" {
			return fmt.Errorf("mesh %s: a component has no name", f.Name)
		}
		if c.Replicas < 0 || c.Requests.MilliCPU < 0 || c.Requests.Bytes < 0 {
			return fmt.Errorf("mesh %s: component %s: replicas and requests must not be negative", f.Name, c.Name)
		}
	}
	return nil
}

// Footprints is a set of mesh footprints, in the order they are reported.
type Footprints struct {
	Meshes []Footprint `json:"meshes"`
}

// FromMesh is the cost model's footprint for one of the mesh registry's.
func FromMesh(m mesh.Footprint) Footprint {
	f := Footprint{Name: m.Name, Description: m.Description}
	if m.Sidecar != nil {
		c := component(*m.Sidecar)
		f.Sidecar = &c
	}
	f.PerNode, f.ControlPlane, f.PerNamespace = components(m.PerNode), components(m.ControlPlane), components(m.PerNamespace)
	return f
}

func component(p mesh.Part) Component {
	return Component{Name: p.Name, Replicas: p.Replicas, Requests: Resources{MilliCPU: p.Requests.CPURequestMilli, Bytes: p.Requests.MemRequestBytes}}
}

func components(ps []mesh.Part) []Component {
	var out []Component
	for _, p := range ps {
		out = append(out, component(p))
	}
	return out
}

// LoadFootprints returns the mesh registry's footprints with the meshes
// of the YAML file at path, when path is not empty, added; a mesh the file
// names replaces the built-in one.
func LoadFootprints(path string) (*Footprints, error) {
	fs := &Footprints{}
	for _, m := range mesh.Footprints() {
		fs.Meshes = append(fs.Meshes, FromMesh(m))
	}
	if path == "" {
		return fs, nil
	}
	var extra Footprints
	if err := readYAML(path, &extra); err != nil {
		return nil, err
	}
	for _, f := range extra.Meshes {
		if err := f.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fs.put(f)
	}
	return fs, nil
}

func (fs *Footprints) put(f Footprint) {
	for i := range fs.Meshes {
		if fs.Meshes[i].Name == f.Name {
			fs.Meshes[i] = f
			return
		}
	}
	fs.Meshes = append(fs.Meshes, f)
}

// Select returns the named footprints in the order given; "baseline" is
// the empty footprint. No names select every mesh.
func (fs *Footprints) Select(names []string) ([]Footprint, error) {
	if len(names) == 0 {
		return fs.Meshes, nil
	}
	var out []Footprint
	for _, n := range names {
		f, err := fs.find(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (fs *Footprints) find(name string) (Footprint, error) {
	if name == mesh.ProfileBaseline {
		return Footprint{Name: mesh.ProfileBaseline, Description: "no mesh"}, nil
	}
	names := []string{mesh.ProfileBaseline}
	for _, f := range fs.Meshes {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Footprint{}, fmt.Errorf("unknown mesh %q; known meshes are %s (add yours with --footprints FILE)", name, strings.Join(names, ", "))
}
