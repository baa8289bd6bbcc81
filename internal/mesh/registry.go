package mesh

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/resources"
)

// Mesh profile names: the one list every platform, the study schema and
// the cost model's footprints take their names from.
const (
	ProfileBaseline         = "baseline"           // no mesh; ingress gateway only
	ProfileSidecar          = "sidecar"            // Istio sidecar mode
	ProfileAmbient          = "ambient"            // Istio ambient, L4 node proxies (ztunnel)
	ProfileAmbientWaypoint  = "ambient-waypoint"   // ambient plus an L7 waypoint per namespace
	ProfileAmbientL4Policy  = "ambient-l4-policy"  // ambient plus ALLOW by SPIFFE principal
	ProfileSidecarL7Policy  = "sidecar-l7-policy"  // sidecar plus an HTTP RBAC path rule
	ProfileWaypointL7Policy = "waypoint-l7-policy" // waypoint plus an HTTP RBAC path rule
	ProfileLinkerd          = "linkerd"            // Linkerd's sidecar proxy
	ProfileCilium           = "cilium"             // Cilium's per-node agent
)

// Plane is how a profile puts pods in the mesh.
type Plane int

// Data planes.
const (
	PlaneNone      Plane = iota
	PlaneSidecar         // a proxy container in every pod
	PlaneNodeProxy       // a proxy per node, pods enrolled by label (Istio ambient)
	PlaneCNI             // the CNI agent on every node (Cilium)
)

// Profile is one mesh profile: what it installs, whatever the platform.
type Profile struct {
	Name string
	// Mesh is the mesh it belongs to: "istio", "linkerd", "cilium", or ""
	// for the baseline.
	Mesh     string
	Plane    Plane
	Waypoint bool // an L7 waypoint proxy per namespace
	L4Policy bool // ALLOW by SPIFFE identity, enforced at L4
	L7Policy bool // ALLOW by identity and HTTP path, enforced at L7
	// Platforms are the platforms that run the profile.
	Platforms []string
}

// Sidecars says whether the profile adds a proxy to every pod.
func (p Profile) Sidecars() bool { return p.Plane == PlaneSidecar }

// NodeProxies says whether the profile runs an L4 proxy per node.
func (p Profile) NodeProxies() bool { return p.Plane == PlaneNodeProxy }

var (
	everywhere = []string{infra.Lab, infra.Kubernetes}
	kubeOnly   = []string{infra.Kubernetes}
)

// profiles is the registry, in the order studies list them.
var profiles = []Profile{
	{Name: ProfileBaseline, Platforms: everywhere},
	{Name: ProfileSidecar, Mesh: "istio", Plane: PlaneSidecar, Platforms: everywhere},
	{Name: ProfileAmbient, Mesh: "istio", Plane: PlaneNodeProxy, Platforms: everywhere},
	{Name: ProfileAmbientWaypoint, Mesh: "istio", Plane: PlaneNodeProxy, Waypoint: true, Platforms: everywhere},
	{Name: ProfileAmbientL4Policy, Mesh: "istio", Plane: PlaneNodeProxy, L4Policy: true, Platforms: everywhere},
	{Name: ProfileSidecarL7Policy, Mesh: "istio", Plane: PlaneSidecar, L7Policy: true, Platforms: everywhere},
	{Name: ProfileWaypointL7Policy, Mesh: "istio", Plane: PlaneNodeProxy, Waypoint: true, L7Policy: true, Platforms: everywhere},
	{Name: ProfileLinkerd, Mesh: "linkerd", Plane: PlaneSidecar, Platforms: kubeOnly},
	{Name: ProfileCilium, Mesh: "cilium", Plane: PlaneCNI, Platforms: kubeOnly},
}

// LookupProfile returns the named profile.
func LookupProfile(name string) (Profile, bool) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return profiles[i], true
}

// ProfileNames lists the profiles a platform runs, sorted; an empty
// platform name lists every profile.
func ProfileNames(platformName string) []string {
	var out []string
	for _, p := range profiles {
		if platformName == "" || slices.Contains(p.Platforms, platformName) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// ProfileOn returns the named profile if the platform runs it, or an
// error that names the profiles it does run.
func ProfileOn(name, platformName string) (Profile, error) {
	p, ok := LookupProfile(name)
	if !ok || !slices.Contains(p.Platforms, platformName) {
		return Profile{}, fmt.Errorf("mesh profile %q: unknown on %s; known: %s", name, platformName, strings.Join(ProfileNames(platformName), ", "))
	}
	return p, nil
}

// Istio's defaults, which every platform applies to a MeshSpec's zero
// values: global.proxy.resources for sidecars, waypoints and gateways
// (requests 100m / 128Mi, limits 2 CPUs / 1Gi), ztunnel's requests (200m /
// 512Mi, no limits) and istio-cni's (100m / 100Mi). Sidecars and waypoints
// run 2 worker threads, and so does ztunnel.
const (
	DefaultWorkers          = 2
	DefaultNodeProxyWorkers = 2
	DefaultWaypointReplicas = 1
	mib                     = 1 << 20
)

var (
	// DefaultProxy are the requests and limits of an Istio proxy: a
	// sidecar, a waypoint or a gateway.
	DefaultProxy = resources.Requirements{CPURequestMilli: 100, CPULimitMilli: 2000, MemRequestBytes: 128 * mib, MemLimitBytes: 1024 * mib}
	// DefaultNodeProxy are ztunnel's requests.
	DefaultNodeProxy = resources.Requirements{CPURequestMilli: 200, MemRequestBytes: 512 * mib}
	// DefaultCNI are istio-cni's node agent's requests.
	DefaultCNI = resources.Requirements{CPURequestMilli: 100, MemRequestBytes: 100 * mib}
)

// ChartSource says where a mesh component's Helm chart comes from on
// Kubernetes: a chart name in a repository (Repo set), a "repo/chart" name
// from the user's Helm repositories, an OCI reference, or a local
// directory or archive. Values are merged over meshbench's values, so that
// a study can set anything the chart offers.
type ChartSource struct {
	Chart   string         `json:"chart,omitempty"`
	Repo    string         `json:"repo,omitempty"`
	Version string         `json:"version,omitempty"`
	Values  map[string]any `json:"values,omitempty"`
}

// Chart keys: the mesh components installed from Helm charts, by the
// names a study's chart overrides use. Cilium has none: it is a cluster's
// network plugin, which meshbench never installs.
const (
	ChartIstioBase      = "istio-base"
	ChartIstiod         = "istiod"
	ChartIstioCNI       = "istio-cni"
	ChartZtunnel        = "ztunnel"
	ChartIstioGateway   = "istio-gateway"
	ChartLinkerdCRDs    = "linkerd-crds"
	ChartLinkerdControl = "linkerd-control-plane"
)

// ChartKeys lists every chart key, sorted.
func ChartKeys() []string {
	keys := []string{ChartIstioBase, ChartIstiod, ChartIstioCNI, ChartZtunnel, ChartIstioGateway, ChartLinkerdCRDs, ChartLinkerdControl}
	slices.Sort(keys)
	return keys
}
