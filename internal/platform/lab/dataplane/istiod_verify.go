package dataplane

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/xdsrelay"
)

// CheckIstiodConfig: under control_plane istiod, every sidecar and
// waypoint runs istiod's
// listeners and clusters and rejected none of its updates.
const CheckIstiodConfig = mesh.CheckIstiodConfig

// checkIstiodConfig reads each istiod-configured proxy's stats (listeners
// and clusters from xDS, every update_rejected counter zero) and the
// relay's record of NACKs (none). Its facts name istiod's version and what the relay changed.
func (in *Installation) checkIstiodConfig(ctx context.Context) mesh.Check {
	in.mu.Lock()
	var ps []*proxy
	for _, p := range in.sidecars {
		ps = append(ps, p)
	}
	for _, p := range in.wpProxies {
		ps = append(ps, p)
	}
	in.mu.Unlock()
	var mu sync.Mutex
	var bad []string
	fail := func(s string) { mu.Lock(); bad = append(bad, s); mu.Unlock() }
	parallel(ps, func(p *proxy) {
		if err := fromIstiod(ctx, p); err != nil {
			fail(p.Name + ": " + err.Error())
		}
		if in.plane.relay.Responses(p.Boot.Node.ID) == 0 {
			fail(p.Name + ": no response from istiod went through the relay")
		}
	})
	rejections := in.plane.relay.Rejections()
	for _, r := range rejections {
		fail(fmt.Sprintf("%s rejected %s: %s", r.Node, r.TypeURL, r.Message))
	}
	if more := in.plane.relay.Rejected() - len(rejections); more > 0 {
		fail(fmt.Sprintf("and %d more rejections", more))
	}
	c := result(CheckIstiodConfig, len(ps), bad, "proxies run istiod's listeners and clusters, no update rejected")
	c.Facts = map[string]string{mesh.FactIstiodVersion: in.plane.version, mesh.FactRelayChanges: changeSummary(in.plane.relay.Changes())}
	return c
}

// fromIstiod checks one proxy from its stats (its config dump cannot be
// rendered: it names istio-proxy's types, which Envoy cannot print): LDS
// and CDS updates accepted, listeners active (the bootstrap has none) and
// clusters beyond the bootstrap's two, and no update rejected.
func fromIstiod(ctx context.Context, p *proxy) error {
	body, code, err := adminGet(ctx, p.path(adminSocket), "/stats")
	if err != nil || code != 200 {
		return fmt.Errorf("stats: %d %v", code, err)
	}
	stats := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if name, value, ok := strings.Cut(line, ": "); ok {
			stats[name] = strings.TrimSpace(value)
		}
	}
	atLeast := func(name string, min uint64) error {
		n, err := strconv.ParseUint(stats[name], 10, 64)
		if err != nil || n < min {
			return fmt.Errorf("%s is %q, want at least %d", name, stats[name], min)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		min  uint64
	}{
		{"listener_manager.lds.update_success", 1}, {"cluster_manager.cds.update_success", 1},
		{"listener_manager.total_listeners_active", 1}, {"cluster_manager.active_clusters", 3},
	} {
		if err := atLeast(c.name, c.min); err != nil {
			return err
		}
	}
	return rejectedUpdates(body)
}

// rejectedUpdates fails on any non-zero update_rejected counter in
// Envoy's text stats.
func rejectedUpdates(stats string) error {
	var rejected []string
	seen := 0
	for _, line := range strings.Split(stats, "\n") {
		name, value, ok := strings.Cut(line, ": ")
		if !ok || !strings.HasSuffix(name, "update_rejected") {
			continue
		}
		seen++
		if n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64); err != nil || n != 0 {
			rejected = append(rejected, name+"="+strings.TrimSpace(value))
		}
	}
	switch {
	case seen == 0:
		return fmt.Errorf("no update_rejected counters in the stats")
	case len(rejected) > 0:
		return fmt.Errorf("updates rejected: %s", strings.Join(rejected, ", "))
	}
	return nil
}

// changeSummary lists the distinct changes the relay made, each with the
// number of resources it was made in.
func changeSummary(cs []xdsrelay.Change) string {
	type key struct{ ext, typ, action string }
	n := map[key]int{}
	for _, c := range cs {
		n[key{c.Extension, c.Type, c.Action}]++
	}
	var out []string
	for k, count := range n {
		out = append(out, fmt.Sprintf("%s (%s) %s in %d resources", k.ext, strings.TrimPrefix(k.typ, "type.googleapis.com/"), k.action, count))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
