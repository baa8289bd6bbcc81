package dataplane

import (
	"fmt"

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
