package mesh

import "strings"

// MeshSpec is one mesh profile and its settings. Zero values take the
// profile's defaults (Istio's: 2 workers, 100m / 128Mi per sidecar,
// 200m / 512Mi per node proxy, 100m / 128Mi per waypoint).
type MeshSpec struct {
	Profile          string `json:"profile"`
	Workers          int    `json:"workers,omitempty"`
	ProxyCPU         string `json:"proxy_cpu,omitempty"`
	ProxyMemory      string `json:"proxy_memory,omitempty"`
	NodeProxyCPU     string `json:"node_proxy_cpu,omitempty"`
	NodeProxyMemory  string `json:"node_proxy_memory,omitempty"`
	WaypointReplicas int    `json:"waypoint_replicas,omitempty"`
	// ProxyVersion, on the lab, is the Envoy release every proxy of the
	// mesh runs, such as "1.38.3", installed by scripts/setup.sh envoy;
	// empty is the lab's default Envoy (MESHBENCH_ENVOY or .venv).
	ProxyVersion string `json:"proxy_version,omitempty"`
	// AccessLog, on the lab, logs every HBONE stream its node proxies and
	// waypoints terminate (ztunnel's and Istio's default), their cost
	// inside the measured figures; off, the default, they log only while
	// verification runs.
	AccessLog bool `json:"access_log,omitempty"`
	// InjectedWork, on the lab, makes every sidecar do that many
	// iterations of a Lua loop on each request it receives (an extra
	// upstream Envoy HTTP filter, envoy.filters.http.lua, before the
	// router on the inbound side): real extra CPU per request, a
	// regression injected on purpose, so that a gate's power is measured
	// on a real one rather than on an edited number (docs/statistics.md).
	// 0, the default, adds no filter.
	InjectedWork int `json:"injected_work,omitempty"`
	// ControlPlane, on the lab, says who configures the proxies:
	// meshbench's own static configuration (ControlPlaneMeshbench, the
	// default) or real istiod over xDS (ControlPlaneIstiod).
	ControlPlane string `json:"control_plane,omitempty"`
	// Context, on Kubernetes, is the kubeconfig context of the cluster
	// that runs this mesh, for a mesh that owns its cluster's network
	// (Cilium); empty is the study's cluster. Cells still interleave
	// across the clusters.
	Context string `json:"context,omitempty"`
	// UseExisting, on Kubernetes, measures the mesh already running in
	// the cluster, installed by someone else: meshbench installs none of
	// its charts, never removes it, still applies its own objects and
	// runs every check, and records the mesh as found. Without it, a
	// mesh meshbench did not install is refused.
	UseExisting bool `json:"use_existing,omitempty"`
}

// MaxInjectedWork bounds InjectedWork: ten million iterations is tens of
// milliseconds of CPU a request, past any regression worth measuring.
const MaxInjectedWork = 10_000_000

// Control planes a lab mesh can take its proxies' configuration from.
const (
	ControlPlaneMeshbench = "meshbench"
	ControlPlaneIstiod    = "istiod"
)

// IstiodProfiles are the lab profiles istiod can configure: those with
// Envoys istiod configures over xDS (sidecars, waypoints). A waypoint
// profile's node proxies keep meshbench's configuration: istiod configures
// ztunnel through its workload API, not Envoy's xDS.
var IstiodProfiles = []string{ProfileSidecar, ProfileSidecarL7Policy, ProfileAmbientWaypoint, ProfileWaypointL7Policy}

// Check is one verification check's outcome.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
	// Unverified, on a check that did not pass, says why its probes could
	// not be sent: a reason of the prober's own (the calling pod had no
	// free local port), which says nothing of the data plane either way.
	Unverified string `json:"unverified,omitempty"`
	// ConfigHash, on a check that verified the data plane's configuration,
	// is a hash of that configuration (every proxy's bootstrap), which the
	// results' provenance keeps per mesh.
	ConfigHash string `json:"config_hash,omitempty"`
	// Facts, on a check that records what was installed (on Kubernetes:
	// charts and versions, images, the values as installed, the cluster's
	// version and nodes), are kept with every cell that ran on it.
	Facts map[string]string `json:"facts,omitempty"`
}

// The verification checks that, passing together, prove mutual TLS
// between meshed pods: a plaintext connection from outside the mesh was
// refused, and a meshed call reached its server carrying the caller's
// identity, which only the mTLS handshake conveys. Every platform that
// makes these checks names them so; reports read mTLS from them alone.
const (
	CheckPlaintextRefused = "plaintext-refused"
	CheckPeerIdentity     = "peer-identity"
)

// CheckIstiodConfig is the lab's check, under control_plane istiod, that
// every proxy runs istiod's configuration. Its facts name istiod's version
// (FactIstiodVersion) and what the xDS relay changed in that configuration
// for upstream Envoy to load it (FactRelayChanges), which reports read.
const (
	CheckIstiodConfig = "config-from-istiod"
	FactIstiodVersion = "istiod"
	FactRelayChanges  = "xds_relay_changes"
)

// FactEnvoyVersion is the fact, on the check that verified a lab data
// plane's configuration, naming the Envoy release its proxies ran.
const FactEnvoyVersion = "envoy_version"

// EnvoyVersion returns the Envoy release the checks record (a lab mesh's
// FactEnvoyVersion), or "".
func EnvoyVersion(checks []Check) string {
	for _, c := range checks {
		if v := c.Facts[FactEnvoyVersion]; v != "" {
			return v
		}
	}
	return ""
}

// MTLSProven reports whether the checks prove mutual TLS: both of the
// checks above are there and passed.
func MTLSProven(checks []Check) bool {
	var refused, identity bool
	for _, c := range checks {
		switch c.Name {
		case CheckPlaintextRefused:
			refused = c.Pass
		case CheckPeerIdentity:
			identity = c.Pass
		}
	}
	return refused && identity
}

// FailedChecks describes the checks that did not pass, as "name: detail"
// joined by "; ", or returns "" when every check passed.
func FailedChecks(checks []Check) string {
	var failed []string
	for _, c := range checks {
		if !c.Pass {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	return strings.Join(failed, "; ")
}
