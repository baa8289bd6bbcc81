package mesh

// ProxiesPerCall is how many data-plane proxies one call between two
// meshed pods passes through under the profile, and which they are, so
// that a report can turn the data plane's CPU per request into CPU per
// proxy pass, the unit Istio publishes. A CNI data plane (Cilium)
// forwards in the kernel and passes no proxy.
func (p Profile) ProxiesPerCall() (n int, which string) {
	switch p.Plane {
	case PlaneSidecar:
		n, which = 2, "the caller's sidecar and the callee's"
	case PlaneNodeProxy:
		n, which = 2, "the caller's node proxy and the callee's, one proxy twice when both pods share a node"
	default:
		return 0, "no proxy"
	}
	if p.Waypoint {
		n, which = n+1, which+", and the callee's waypoint"
	}
	return n, which
}
