package mesh

import "github.com/meshbench/meshbench/internal/resources"

// Footprint is what a profile adds to a cluster's resource requests, as
// the cost model and predict price it. Its Name is the profile it is
// defined for; a profile that adds no pods to another (a policy variant)
// shares that profile's footprint.
type Footprint struct {
	Name        string
	Description string
	// Sidecar is added to every application pod.
	Sidecar *Part
	// PerNode run one pod on every node, PerNamespace in every
	// application namespace, ControlPlane once per cluster.
	PerNode, ControlPlane, PerNamespace []Part
}

// Part is one kind of pod a mesh adds: its summed container requests
// (limits unused) and its replicas per instance (per cluster or per
// namespace; 0 reads as 1, and sidecars and per-node pods have none).
type Part struct {
	Name     string
	Replicas int
	Requests resources.Requirements
}

// IstiodRequests are istiod's requests in Istio's chart: 500m and 2Gi.
var IstiodRequests = requests(500, 2048*mib)

func requests(milliCPU, memBytes int64) resources.Requirements {
	return resources.Requirements{CPURequestMilli: milliCPU, MemRequestBytes: memBytes}
}

// The footprints the built-in profiles are priced by. Istio's are the
// Solo.io 50-tenant study's settings: sidecar 250m / 128Mi per pod;
// ztunnel 200m / 512Mi and istio-cni 100m / 100Mi per node; istiod 500m /
// 2Gi; waypoint 100m / 128Mi per replica. The study gives its waypoints as
// "configured to be highly available" without a replica count; two
// replicas is the least that is.
//
// Linkerd's is as that study ran it (stable-2.14.10, proxy requests 100m /
// 128Mi via proxy.resources, which also applies to the control plane's own
// proxies). The chart's defaults leave the destination, identity and
// proxy-injector containers without requests, with one replica each, so
// each control-plane pod requests just its proxy. proxy-init (100m / 20Mi)
// is an init container and adds nothing to a pod whose containers request
// more.
var (
	istiod         = []Part{{Name: "istiod", Replicas: 1, Requests: IstiodRequests}}
	istioNodeParts = []Part{{Name: "ztunnel", Requests: requests(200, 512*mib)}, {Name: "istio-cni", Requests: requests(100, 100*mib)}}

	footprintBaseline = &Footprint{Name: ProfileBaseline, Description: "no mesh"}
	footprintSidecar  = &Footprint{Name: ProfileSidecar, Description: "Istio sidecar mode",
		Sidecar: &Part{Name: "istio-proxy", Requests: requests(250, 128*mib)}, ControlPlane: istiod}
	footprintAmbient = &Footprint{Name: ProfileAmbient, Description: "Istio ambient mode, L4 (ztunnel)",
		PerNode: istioNodeParts, ControlPlane: istiod}
	// An L4 AuthorizationPolicy is enforced by ztunnel: it adds no pods.
	footprintAmbientL4Policy = &Footprint{Name: ProfileAmbientL4Policy, Description: "Istio ambient mode, L4 with AuthorizationPolicy",
		PerNode: istioNodeParts, ControlPlane: istiod}
	footprintAmbientWaypoint = &Footprint{Name: ProfileAmbientWaypoint, Description: "Istio ambient mode with a waypoint per namespace (L7)",
		PerNode: istioNodeParts, ControlPlane: istiod,
		PerNamespace: []Part{{Name: "waypoint", Replicas: 2, Requests: requests(100, 128*mib)}}}
	linkerdProxy     = requests(100, 128*mib)
	footprintLinkerd = &Footprint{Name: ProfileLinkerd, Description: "Linkerd, proxy requests 100m / 128Mi",
		Sidecar: &Part{Name: "linkerd-proxy", Requests: linkerdProxy},
		ControlPlane: []Part{
			{Name: "linkerd-destination", Replicas: 1, Requests: linkerdProxy},
			{Name: "linkerd-identity", Replicas: 1, Requests: linkerdProxy},
			{Name: "linkerd-proxy-injector", Replicas: 1, Requests: linkerdProxy},
		}}
)

// Footprints lists the footprints of the registered profiles, each once,
// in the order their profiles were registered; the baseline's, which
// adds nothing, is left out.
func Footprints() []Footprint {
	mu.RLock()
	defer mu.RUnlock()
	var out []Footprint
	seen := map[*Footprint]bool{}
	for _, p := range profiles {
		if p.Footprint == nil || seen[p.Footprint] || p.Name == ProfileBaseline {
			continue
		}
		seen[p.Footprint] = true
		out = append(out, *p.Footprint)
	}
	return out
}
