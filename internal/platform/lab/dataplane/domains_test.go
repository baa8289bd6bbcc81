package dataplane

import (
	"encoding/json"
	"net/netip"
	"slices"
	"testing"
)

// twoTenants is the fixture with a second namespace holding the same
// services under the same names, as the 50-tenant study stamps them out.
func twoTenants() Inventory {
	inv := fixture()
	n := len(inv.Services)
	for i := 0; i < n; i++ {
		s := inv.Services[i]
		s.Namespace = "ns-2"
		s.VIP = netip.AddrFrom4([4]byte{10, 96, 1, byte(10 + i)})
		ep := netip.AddrFrom4([4]byte{10, 244, 1, byte(50 + i)})
		s.Endpoints = []netip.AddrPort{netip.AddrPortFrom(ep, 8080)}
		inv.Services = append(inv.Services, s)
	}
	return inv
}

// routeDomains collects, per route configuration in a proxy's bootstrap,
// every domain of every virtual host, walking the rendered JSON so that
// it sees exactly what Envoy will.
func routeDomains(t *testing.T, p *proxy) map[string][]string {
	t.Helper()
	b, err := json.Marshal(p.Boot)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func(any)
	walk = func(x any) {
		switch v := x.(type) {
		case map[string]any:
			if hosts, ok := v["virtual_hosts"].([]any); ok {
				name, _ := v["name"].(string)
				for _, h := range hosts {
					for _, d := range h.(map[string]any)["domains"].([]any) {
						out[name] = append(out[name], d.(string))
					}
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// Envoy refuses a route table in which two virtual hosts share a domain,
// so with many tenants the short service names must not repeat.
func TestDomainsUniqueAcrossTenants(t *testing.T) {
	t.Parallel()
	inv := twoTenants()
	v := newView(inv)
	dir := t.TempDir()
	tests := []struct {
		name string
		p    *proxy
	}{
		{"ingress", buildIngress(v, &inv.Nodes[2], Settings{Workers: 2}, dir, plainUpstream)},
		{"sidecar of a load generator", buildSidecar(v, podNamed(&inv, "loadgen-0"), Settings{Workers: 2}, dir, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tables := routeDomains(t, tt.p)
			if len(tables) == 0 {
				t.Fatal("no route tables found")
			}
			for table, domains := range tables {
				seen := map[string]bool{}
				for _, d := range domains {
					if seen[d] {
						t.Errorf("route table %q lists domain %q twice", table, d)
					}
					seen[d] = true
				}
			}
		})
	}
	// Within its own namespace a client still reaches a Service by its
	// short name, as Kubernetes DNS lets it.
	if got := serviceDomains(&inv.Services[0], "ns-1"); !slices.Contains(got, "tier-1-app-a") {
		t.Errorf("same-namespace domains %v lack the short name", got)
	}
	if got := serviceDomains(&inv.Services[0], "ns-2"); slices.Contains(got, "tier-1-app-a") {
		t.Errorf("cross-namespace domains %v include the short name", got)
	}
}
