package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/mesh"
)

// parity is the configuration parity of a lab study holding a mesh under
// control_plane istiod beside its twin under meshbench's configuration:
// how far the lab's own configuration is from Istio's, per profile, as
// ratios istiod / meshbench with their intervals, and what the xDS relay
// changed in istiod's configuration for upstream Envoy to load it.
func (b *builder) parity() Section {
	s := Section{ID: "parity", Title: "Configuration parity"}
	rep := b.d.Representative()
	ps := b.d.Parities(rep)
	if len(ps) == 0 {
		return s
	}
	t := &Table{Header: []string{"Profile", "meshbench's", "istiod's", "Data-plane CPU per request (ratio)", "Memory per proxy (ratio)",
		"Added p50 (ratio)", "Added p99 (ratio)", "p50, istiod's − meshbench's (ms)", "Relay changed"}}
	for _, p := range ps {
		p50 := "—"
		if p.P50.Delta.Valid() {
			p50 = addedText(p.P50.Delta)
		}
		t.Rows = append(t.Rows, []string{p.Profile, p.Meshbench, p.Istiod,
			ratioEst(p.CPUPerRequest), ratioEst(p.MemoryPerProxy), ratioEst(p.AddedP50), ratioEst(p.AddedP99),
			p50, b.relayChanges(p.Istiod)})
	}
	t.Notes = []string{
		fmt.Sprintf("At %s: %s. Each ratio is istiod's figure over meshbench's, the median of repetitions each, with the 95%% bootstrap interval of that ratio "+
			"(the repetitions of each side resampled independently); an interval across 1 is no measurable difference. "+
			"Each pair is one profile with the same settings, its proxies configured by meshbench (static bootstraps) and by istiod (over xDS, through the relay).", rep.Label(), loadText(b.firstGroup(rep))),
		"Data-plane CPU per request is the data plane's mean cores over completed requests a second; memory per proxy its mean working set over its proxies. " +
			"Added latency is each mesh's median over the baseline's; its ratio has no interval without a baseline or with fewer than 3 repetitions a side, " +
			"and reads n/a when meshbench's configuration adds nothing.",
		"Relay changed lists the Istio-only extensions the xDS relay removed or marked optional, each with how many resources it changed (the config-from-istiod check's facts).",
	}
	s.Blocks = append(s.Blocks, table(t))
	return s
}

// ratioEst formats a ratio with its interval, as a factor.
func ratioEst(e analysis.Estimate) string {
	switch {
	case !e.Valid():
		return "—"
	case math.IsNaN(e.Median):
		return "n/a"
	case !e.Interval():
		return num(e.Median) + "× (too few runs)"
	}
	return fmt.Sprintf("%s× [%s, %s]%s", num(e.Median), num(e.Lo), num(e.Hi), levelText(e))
}

// relayChanges is what the relay changed for a mesh, as its cells'
// config-from-istiod checks recorded it, each distinct record once.
func (b *builder) relayChanges(name string) string {
	seen := map[string]bool{}
	for _, c := range b.d.Index.Cells {
		if c.Mesh != name {
			continue
		}
		for _, ch := range c.Verification {
			if ch.Name == mesh.CheckIstiodConfig && ch.Facts[mesh.FactRelayChanges] != "" {
				seen[ch.Facts[mesh.FactRelayChanges]] = true
			}
		}
	}
	if len(seen) == 0 {
		return "not recorded"
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// istiodMeshes are the meshes whose proxies istiod configured.
func (b *builder) istiodMeshes() []string {
	var out []string
	for _, m := range b.d.Meshes {
		if s, ok := b.d.MeshSpec(m); ok && s.ControlPlane == mesh.ControlPlaneIstiod {
			out = append(out, m)
		}
	}
	return out
}
