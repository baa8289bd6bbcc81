package cost

import (
	"fmt"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

// assumptions lists everything an allocation rests on, one line each.
// The baseline's scenario adds nothing and is not described.
func assumptions(w Workload, m MachineType, pricesNote string, runs []scenario, ex *Example) ([]string, error) {
	alloc, err := m.NodeAllocatable()
	if err != nil {
		return nil, err
	}
	perNS := 0
	for _, s := range w.Pods {
		perNS += s.Count
	}
	out := []string{fmt.Sprintf("workload: %s, %d namespaces x %d pods = %d application pods", w.Name, w.Namespaces, perNS, perNS*w.Namespaces)}
	per := " per namespace"
	if w.Namespaces == 1 {
		out[0], per = fmt.Sprintf("workload: %s, %d application pods", w.Name, perNS), ""
	}
	for _, s := range w.Pods {
		out = append(out, fmt.Sprintf("  %s: %v x %d%s", s.Name, s.Requests, s.Count, per))
	}
	how := fmt.Sprintf("by %s's published reservations", m.Provider)
	if m.Allocatable != nil {
		how = "as given in the catalog"
	}
	out = append(out,
		fmt.Sprintf("node: %s: %d vCPU, %g GiB, max %d pods; allocatable %s / %.2fGi %s; %s a month",
			m.Name, m.VCPU, m.MemoryGiB, m.MaxPods, resources.FormatCPU(alloc.MilliCPU), float64(alloc.Bytes)/float64(GiB), how, dollars(m.MonthlyUSD)),
		"prices: "+pricesNote)
	for _, s := range runs {
		if s.f.Name == mesh.ProfileBaseline {
			continue
		}
		out = append(out, fmt.Sprintf("mesh %s (%s):", s.f.Name, s.f.Description))
		for _, l := range s.lines() {
			out = append(out, "  "+l)
		}
	}
	out = append(out,
		"nodes: the fewest that hold every pod whole, with the per-node pods on every node (quick heuristics, then an exact search)",
		"ideal: the requests over what a node offers, as if pods could be split",
		"not counted: the provider's own system pods (kube-proxy, logging and metrics agents) and the load generators",
	)
	if ex != nil {
		out = append(out, "study: "+ex.Study, "  "+ex.summary())
		for _, n := range ex.Notes {
			out = append(out, "  "+n)
		}
	}
	return out, nil
}
