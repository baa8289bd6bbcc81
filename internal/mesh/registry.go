package mesh

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/versions"
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

// Mesh family names.
const (
	Istio   = "istio"
	Linkerd = "linkerd"
	Cilium  = "cilium"
)

// Family is one mesh: the facts every profile of it shares.
type Family struct {
	Name string
	// SidecarContainer is the name of the proxy container its sidecar
	// profiles add to every pod, and of its waypoints' container.
	SidecarContainer string
	// Proxy are the default requests and limits of its sidecars and
	// waypoints, NodeProxy those of its node proxies, and Workers their
	// default worker threads.
	Proxy, NodeProxy resources.Requirements
	Workers          int
	// SMPType is its mesh type in a Service Mesh Performance export.
	SMPType string
	// VersionChart is the chart key whose installed version is the
	// mesh's version in exports; empty when meshbench installs none.
	// NodeProxyChart is the chart of its node proxies, whose version is
	// theirs; EnvoyProxies says its other proxies are Envoy, whose version
	// the platform records.
	VersionChart   string
	NodeProxyChart string
	EnvoyProxies   bool
	// Charts are the chart keys it installs on Kubernetes, in order, with
	// NodeProxyCharts after them for its node-proxy profiles and
	// IngressChart last when the study asks for an ingress gateway.
	Charts, NodeProxyCharts []string
	IngressChart            string
}

// ChartsFor are the chart keys a profile installs on Kubernetes, its
// ingress gateway's included when ingress is set.
func (p Profile) ChartsFor(ingress bool) []string {
	f := p.Family()
	keys := slices.Clone(f.Charts)
	if p.NodeProxies() {
		keys = append(keys, f.NodeProxyCharts...)
	}
	if ingress && f.IngressChart != "" {
		keys = append(keys, f.IngressChart)
	}
	return keys
}

// Profile is one mesh profile: what it installs, whatever the platform.
type Profile struct {
	Name string
	// Mesh is the family it belongs to (Istio, Linkerd, Cilium), or ""
	// for the baseline.
	Mesh  string
	Plane Plane
	// LabDataPlane names the lab data plane that installs it, as the lab
	// registers it; empty for the baseline and off the lab.
	LabDataPlane string
	// Footprint is what it adds to a cluster's requests, as the cost
	// model prices it: its own, or for a policy variant the one of the
	// profile it adds a policy to (a policy adds no pods); nil where the
	// cost model has none.
	Footprint *Footprint
	Waypoint  bool // an L7 waypoint proxy per namespace
	L4Policy  bool // ALLOW by SPIFFE identity, enforced at L4
	L7Policy  bool // ALLOW by identity and HTTP path, enforced at L7
	// MinLabEnvoy is the earliest Envoy release the lab's data plane for
	// it runs on, for a study's proxy_version; "" for any.
	MinLabEnvoy string
	// Platforms are the platforms that run the profile.
	Platforms []string
	// Colour is its colour in every chart of every report (an sRGB hex
	// triplet), whatever order a study ran its meshes in.
	Colour string
}

// Sidecars says whether the profile adds a proxy to every pod.
func (p Profile) Sidecars() bool { return p.Plane == PlaneSidecar }

// NodeProxies says whether the profile runs an L4 proxy per node.
func (p Profile) NodeProxies() bool { return p.Plane == PlaneNodeProxy }

var (
	everywhere = []string{infra.Lab, infra.Kubernetes}
	kubeOnly   = []string{infra.Kubernetes}
)

// The lab's data planes for Istio's profiles.
const (
	LabIstioSidecar = "istio-sidecar"
	LabIstioAmbient = "istio-ambient"
)

// The registry: families by name, and profiles in the order studies list
// them. Register adds to it.
var (
	mu       sync.RWMutex
	families = map[string]Family{}
	profiles []Profile
)

func init() {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(Register(Family{}, Profile{Name: ProfileBaseline, Footprint: footprintBaseline, Platforms: everywhere, Colour: "#0072B2"}))
	must(Register(Family{Name: Istio, SidecarContainer: "istio-proxy", Proxy: DefaultProxy, NodeProxy: DefaultNodeProxy,
		Workers: DefaultWorkers, SMPType: "ISTIO", VersionChart: ChartIstiod, NodeProxyChart: ChartZtunnel, EnvoyProxies: true,
		Charts: []string{ChartIstioBase, ChartIstiod}, NodeProxyCharts: []string{ChartIstioCNI, ChartZtunnel}, IngressChart: ChartIstioGateway},
		Profile{Name: ProfileSidecar, Plane: PlaneSidecar, LabDataPlane: LabIstioSidecar, Footprint: footprintSidecar, Platforms: everywhere, Colour: "#D55E00"},
		Profile{Name: ProfileAmbient, Plane: PlaneNodeProxy, LabDataPlane: LabIstioAmbient, Footprint: footprintAmbient, Platforms: everywhere, Colour: "#009E73"},
		Profile{Name: ProfileAmbientL4Policy, Plane: PlaneNodeProxy, LabDataPlane: LabIstioAmbient, Footprint: footprintAmbientL4Policy, L4Policy: true, Platforms: everywhere, Colour: "#E69F00"},
		Profile{Name: ProfileAmbientWaypoint, Plane: PlaneNodeProxy, LabDataPlane: LabIstioAmbient, Footprint: footprintAmbientWaypoint, Waypoint: true, MinLabEnvoy: versions.EnvoyWaypointMin, Platforms: everywhere, Colour: "#CC79A7"},
		Profile{Name: ProfileSidecarL7Policy, Plane: PlaneSidecar, LabDataPlane: LabIstioSidecar, Footprint: footprintSidecar, L7Policy: true, Platforms: everywhere, Colour: "#56B4E9"},
		Profile{Name: ProfileWaypointL7Policy, Plane: PlaneNodeProxy, LabDataPlane: LabIstioAmbient, Footprint: footprintAmbientWaypoint, Waypoint: true, L7Policy: true, MinLabEnvoy: versions.EnvoyWaypointMin, Platforms: everywhere, Colour: "#7F3C8D"}))
	must(Register(Family{Name: Linkerd, SidecarContainer: "linkerd-proxy", SMPType: "LINKERD", VersionChart: ChartLinkerdControl,
		Charts: []string{ChartLinkerdCRDs, ChartLinkerdControl}},
		Profile{Name: ProfileLinkerd, Plane: PlaneSidecar, Footprint: footprintLinkerd, Platforms: kubeOnly, Colour: "#8C564B"}))
	must(Register(Family{Name: Cilium, SMPType: "CILIUM_SERVICE_MESH"},
		Profile{Name: ProfileCilium, Plane: PlaneCNI, Platforms: kubeOnly, Colour: "#6B6B00"}))
}

// Register adds a mesh family and its profiles, each profile's Mesh set
// to the family; the zero Family registers profiles of no mesh (the
// baseline). A name already registered is an error.
func Register(f Family, ps ...Profile) error {
	mu.Lock()
	defer mu.Unlock()
	if f.Name != "" {
		if _, ok := families[f.Name]; ok {
			return fmt.Errorf("mesh family %q is already registered", f.Name)
		}
	}
	for _, p := range ps {
		if slices.ContainsFunc(profiles, func(q Profile) bool { return q.Name == p.Name }) {
			return fmt.Errorf("mesh profile %q is already registered", p.Name)
		}
	}
	if f.Name != "" {
		families[f.Name] = f
	}
	for _, p := range ps {
		p.Mesh = f.Name
		profiles = append(profiles, p)
	}
	return nil
}

// Family returns the family the profile belongs to; the zero Family for
// the baseline.
func (p Profile) Family() Family {
	mu.RLock()
	defer mu.RUnlock()
	return families[p.Mesh]
}

// IsSidecarContainer says whether a container is some family's sidecar
// proxy, by its name.
func IsSidecarContainer(name string) bool {
	mu.RLock()
	defer mu.RUnlock()
	for _, f := range families {
		if f.SidecarContainer != "" && f.SidecarContainer == name {
			return true
		}
	}
	return false
}

// LookupProfile returns the named profile.
func LookupProfile(name string) (Profile, bool) {
	mu.RLock()
	defer mu.RUnlock()
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return profiles[i], true
}

// ProfileNames lists the profiles a platform runs, sorted; an empty
// platform name lists every profile.
func ProfileNames(platformName string) []string {
	mu.RLock()
	defer mu.RUnlock()
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
