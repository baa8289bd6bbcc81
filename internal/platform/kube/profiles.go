package kube

import (
	"fmt"
	"sort"
	"strings"
)

// Mesh profiles the Kubernetes platform installs. The Istio ones are the
// study's profile names; linkerd and cilium run only on Kubernetes.
const (
	ProfileBaseline         = "baseline"
	ProfileSidecar          = "sidecar"
	ProfileAmbient          = "ambient"
	ProfileAmbientWaypoint  = "ambient-waypoint"
	ProfileAmbientL4Policy  = "ambient-l4-policy"
	ProfileSidecarL7Policy  = "sidecar-l7-policy"
	ProfileWaypointL7Policy = "waypoint-l7-policy"
	ProfileLinkerd          = "linkerd"
	ProfileCilium           = "cilium"
)

// dataPlane is how a profile puts pods in the mesh.
type dataPlane int

const (
	planeNone    dataPlane = iota
	planeSidecar           // an injected proxy container per pod
	planeAmbient           // a node proxy per node, pods enrolled by label
	planeCilium            // the CNI agent per node
)

// profile is what one mesh profile consists of.
type profile struct {
	Mesh      string // "istio", "linkerd", "cilium" or "" for none
	Plane     dataPlane
	Proxy     string // the sidecar container's name
	Waypoint  bool   // a waypoint per namespace (ambient L7)
	L4Policy  bool   // ALLOW by SPIFFE identity, enforced at L4
	L7Policy  bool   // ALLOW by identity and method, enforced at L7
	Restarts  bool   // pods must be re-created to join or leave
	MTLSProbe bool   // a plaintext probe from outside must fail
}

var profiles = map[string]profile{
	ProfileBaseline:         {},
	ProfileSidecar:          {Mesh: "istio", Plane: planeSidecar, Proxy: "istio-proxy", Restarts: true, MTLSProbe: true},
	ProfileSidecarL7Policy:  {Mesh: "istio", Plane: planeSidecar, Proxy: "istio-proxy", Restarts: true, MTLSProbe: true, L7Policy: true},
	ProfileAmbient:          {Mesh: "istio", Plane: planeAmbient, MTLSProbe: true},
	ProfileAmbientL4Policy:  {Mesh: "istio", Plane: planeAmbient, MTLSProbe: true, L4Policy: true},
	ProfileAmbientWaypoint:  {Mesh: "istio", Plane: planeAmbient, MTLSProbe: true, Waypoint: true},
	ProfileWaypointL7Policy: {Mesh: "istio", Plane: planeAmbient, MTLSProbe: true, Waypoint: true, L7Policy: true},
	ProfileLinkerd:          {Mesh: "linkerd", Plane: planeSidecar, Proxy: "linkerd-proxy", Restarts: true, MTLSProbe: true},
	ProfileCilium:           {Mesh: "cilium", Plane: planeCilium, MTLSProbe: true},
}

// Profiles lists the profile names the Kubernetes platform knows.
func Profiles() []string {
	out := make([]string, 0, len(profiles))
	for name := range profiles {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func lookupProfile(name string) (profile, error) {
	pr, ok := profiles[name]
	if !ok {
		return profile{}, fmt.Errorf("mesh profile %q: unknown on kubernetes; known: %s", name, strings.Join(Profiles(), ", "))
	}
	return pr, nil
}
