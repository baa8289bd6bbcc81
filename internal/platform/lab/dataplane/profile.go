package dataplane

import (
	"fmt"
	"slices"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

// Settings are a profile with every default filled in.
type Settings struct {
	Profile string `json:"profile"`
	// Workers is each sidecar's and waypoint's --concurrency.
	Workers          int                    `json:"workers"`
	Sidecar          resources.Requirements `json:"sidecar"`
	NodeProxy        resources.Requirements `json:"node_proxy"`
	Waypoint         resources.Requirements `json:"waypoint"`
	WaypointReplicas int                    `json:"waypoint_replicas"`
	Ingress          resources.Requirements `json:"ingress"`
	// AccessLog logs every HBONE stream the node proxies and waypoints
	// terminate, as ztunnel and waypoints do by default; off, they log
	// only while the identity check runs.
	AccessLog bool `json:"access_log,omitempty"`
	// ControlPlane configures the proxies: meshbench's static bootstraps
	// or istiod over xDS.
	ControlPlane string `json:"control_plane"`
	// InjectedWork is the Lua loop's iterations each sidecar runs on every
	// request it receives (mesh.MeshSpec.InjectedWork); 0 for none.
	InjectedWork int `json:"injected_work,omitempty"`
}

// SettingsFor validates a mesh spec and fills in the profile's defaults.
func SettingsFor(spec mesh.MeshSpec) (Settings, error) {
	name := spec.Profile
	if name == "" {
		name = mesh.ProfileBaseline
	}
	p, err := mesh.ProfileOn(name, infra.Lab)
	if err != nil {
		return Settings{}, err
	}
	// The family's proxy defaults; the ingress gateway is Istio's under
	// every profile, the baseline's included.
	fam := p.Family()
	s := Settings{
		Profile: name, Workers: fam.Workers, WaypointReplicas: mesh.DefaultWaypointReplicas,
		Sidecar: fam.Proxy, NodeProxy: fam.NodeProxy, Waypoint: fam.Proxy, Ingress: mesh.DefaultProxy,
		AccessLog: spec.AccessLog,
	}
	if s.Workers == 0 {
		s.Workers = mesh.DefaultWorkers
	}
	switch spec.ControlPlane {
	case "", mesh.ControlPlaneMeshbench:
		s.ControlPlane = mesh.ControlPlaneMeshbench
	case mesh.ControlPlaneIstiod:
		if !slices.Contains(mesh.IstiodProfiles, name) {
			return Settings{}, fmt.Errorf("mesh control_plane istiod configures profiles %v, not %s", mesh.IstiodProfiles, name)
		}
		s.ControlPlane = mesh.ControlPlaneIstiod
	default:
		return Settings{}, fmt.Errorf("mesh control_plane %q: want %s or %s", spec.ControlPlane, mesh.ControlPlaneMeshbench, mesh.ControlPlaneIstiod)
	}
	if spec.InjectedWork != 0 {
		switch {
		case spec.InjectedWork < 0 || spec.InjectedWork > mesh.MaxInjectedWork:
			return Settings{}, fmt.Errorf("mesh injected_work %d: want 0 to %d loop iterations", spec.InjectedWork, mesh.MaxInjectedWork)
		case !p.Sidecars():
			return Settings{}, fmt.Errorf("mesh injected_work runs in sidecars; profile %s has none", name)
		case s.ControlPlane == mesh.ControlPlaneIstiod:
			return Settings{}, fmt.Errorf("mesh injected_work is meshbench's filter; under control_plane istiod, istiod configures the sidecars")
		}
		s.InjectedWork = spec.InjectedWork
	}
	if spec.Workers < 0 || spec.WaypointReplicas < 0 {
		return Settings{}, fmt.Errorf("mesh workers and waypoint_replicas must not be negative")
	}
	if spec.Workers > 0 {
		s.Workers = spec.Workers
	}
	if spec.WaypointReplicas > 0 {
		s.WaypointReplicas = spec.WaypointReplicas
	}
	if s.Sidecar, err = override(s.Sidecar, spec.ProxyCPU, spec.ProxyMemory, "proxy"); err != nil {
		return Settings{}, err
	}
	// A waypoint is the same Istio proxy as a sidecar and takes its sizes.
	if s.Waypoint, err = override(s.Waypoint, spec.ProxyCPU, spec.ProxyMemory, "proxy"); err != nil {
		return Settings{}, err
	}
	if s.NodeProxy, err = override(s.NodeProxy, spec.NodeProxyCPU, spec.NodeProxyMemory, "node_proxy"); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// override replaces the requests of r by the given quantities, if set.
func override(r resources.Requirements, cpu, mem, field string) (resources.Requirements, error) {
	c, err := resources.ParseCPU(cpu)
	if err != nil {
		return r, fmt.Errorf("mesh %s_cpu: %w", field, err)
	}
	m, err := resources.ParseMemory(mem)
	if err != nil {
		return r, fmt.Errorf("mesh %s_memory: %w", field, err)
	}
	return r.WithRequests(c, m), nil
}

// profile is the registry entry of the settings' profile, which
// SettingsFor checked.
func (s Settings) profile() mesh.Profile {
	p, _ := mesh.LookupProfile(s.Profile)
	return p
}
