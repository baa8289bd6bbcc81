package report

import (
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/metrics"
)

// unmeasuredParts are the mesh pieces a report names only when some cell
// measured them; otherwise the "Not measured" section says they are absent.
var unmeasuredParts = []struct {
	part analysis.Part
	what string
}{
	{analysis.RolePart(metrics.RoleControlPlane), "the mesh's control plane (istiod, linkerd-destination, cilium-operator): its CPU and memory, and configuration push"},
	{analysis.RolePart(metrics.RoleCNI), "the CNI node agents (istio-cni, cilium-agent)"},
}

// notMeasured says what the figures leave out: parts no cell measured and,
// on the lab, what it does not emulate.
func (b *builder) notMeasured() Section {
	s := Section{ID: "not-measured", Title: "Not measured"}
	var items []string
	for _, u := range unmeasuredParts {
		if len(b.meshesWith(u.part)) == 0 {
			items = append(items, strings.ToUpper(u.what[:1])+u.what[1:]+": no cell measured it, so no figure above includes it.")
		}
	}
	if b.d.Index.Provenance.Platform.Name == "lab" {
		items = append(items, "The lab emulates the data plane only: its Envoy proxies run a static configuration written at install time, "+
			"with no control plane, no CNI, no certificate rotation and no service discovery; their costs are not in these results. "+
			"Kubernetes' own agents (kubelet, container runtime, kube-proxy) are not emulated either: Services are NAT rules in the kernel.")
		if ms := b.istiodMeshes(); len(ms) > 0 {
			items = append(items, "Except under control_plane istiod ("+strings.Join(ms, ", ")+"): real istiod configured those sidecars over xDS and its CPU and memory are measured; "+
				"the API server and kwok it reads stand in for a cluster's control plane and are not measured, and certificates are still meshbench's, without rotation.")
		}
	}
	if !b.hostNoiseMeasured() {
		items = append(items, "Host noise: the platform did not measure CPU used by anything outside the study on its nodes, so no cell could be flagged as noisy.")
	}
	if len(items) > 0 {
		s.Blocks = append(s.Blocks, Block{List: items})
	}
	return s
}
