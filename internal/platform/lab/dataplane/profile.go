package dataplane

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

// Profile names a mesh data plane.
type Profile string

// The profiles.
const (
	Baseline         Profile = "baseline"           // no mesh; ingress gateway only
	Sidecar          Profile = "sidecar"            // Istio sidecar mode
	Ambient          Profile = "ambient"            // Istio ambient, L4 node proxies
	AmbientWaypoint  Profile = "ambient-waypoint"   // ambient plus an L7 waypoint per namespace
	AmbientL4Policy  Profile = "ambient-l4-policy"  // ambient plus ALLOW by SPIFFE principal
	SidecarL7Policy  Profile = "sidecar-l7-policy"  // sidecar plus an HTTP RBAC path rule
	WaypointL7Policy Profile = "waypoint-l7-policy" // waypoint plus an HTTP RBAC path rule
)

// features says which parts a profile installs.
type features struct {
	sidecars, nodeProxies, waypoints bool
	l4Policy, l7Policy               bool
}

var profiles = map[Profile]features{
	Baseline:         {},
	Sidecar:          {sidecars: true},
	Ambient:          {nodeProxies: true},
	AmbientWaypoint:  {nodeProxies: true, waypoints: true},
	AmbientL4Policy:  {nodeProxies: true, l4Policy: true},
	SidecarL7Policy:  {sidecars: true, l7Policy: true},
	WaypointL7Policy: {nodeProxies: true, waypoints: true, l7Policy: true},
}

// Profiles lists every profile name, sorted.
func Profiles() []string {
	var out []string
	for p := range profiles {
		out = append(out, string(p))
	}
	sort.Strings(out)
	return out
}

// Settings are a profile with every default filled in.
type Settings struct {
	Profile Profile `json:"profile"`
	// Workers is each sidecar's and waypoint's --concurrency.
	Workers          int       `json:"workers"`
	Sidecar          Resources `json:"sidecar"`
	NodeProxy        Resources `json:"node_proxy"`
	Waypoint         Resources `json:"waypoint"`
	WaypointReplicas int       `json:"waypoint_replicas"`
	Ingress          Resources `json:"ingress"`
}

// Istio's defaults: global.proxy.resources for sidecars, waypoints and
// gateways (requests 100m / 128Mi, limits 2 CPUs / 1Gi), and ztunnel's
// requests (200m / 512Mi, no limits). ztunnel runs 2 worker threads.
const (
	defaultWorkers   = 2
	nodeProxyWorkers = 2
	mi               = 1 << 20
)

var (
	istioProxyResources = Resources{CPURequestMilli: 100, CPULimitMilli: 2000, MemRequestBytes: 128 * mi, MemLimitBytes: 1024 * mi}
	ztunnelResources    = Resources{CPURequestMilli: 200, MemRequestBytes: 512 * mi}
)

// SettingsFor validates a mesh spec and fills in the profile's defaults.
func SettingsFor(spec platform.MeshSpec) (Settings, error) {
	p := Profile(spec.Profile)
	if p == "" {
		p = Baseline
	}
	if _, ok := profiles[p]; !ok {
		return Settings{}, fmt.Errorf("mesh profile %q: want one of %s", spec.Profile, strings.Join(Profiles(), ", "))
	}
	s := Settings{
		Profile: p, Workers: defaultWorkers, WaypointReplicas: 1,
		Sidecar: istioProxyResources, NodeProxy: ztunnelResources, Waypoint: istioProxyResources, Ingress: istioProxyResources,
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
	var err error
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
func override(r Resources, cpu, mem, field string) (Resources, error) {
	if cpu != "" {
		v, err := topology.ParseCPU(cpu)
		if err != nil {
			return r, fmt.Errorf("mesh %s_cpu: %w", field, err)
		}
		r.CPURequestMilli = v
		if r.CPULimitMilli > 0 {
			r.CPULimitMilli = max(r.CPULimitMilli, v)
		}
	}
	if mem != "" {
		v, err := topology.ParseMemory(mem)
		if err != nil {
			return r, fmt.Errorf("mesh %s_memory: %w", field, err)
		}
		r.MemRequestBytes = v
		if r.MemLimitBytes > 0 {
			r.MemLimitBytes = max(r.MemLimitBytes, v)
		}
	}
	return r, nil
}
