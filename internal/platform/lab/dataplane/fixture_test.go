package dataplane

import (
	"fmt"
	"net/netip"

	"github.com/meshbench/meshbench/internal/metrics"
)

// fixture is the tiered graph in one namespace on a 3-node cluster: the
// app node runs the four services, the load node one load generator,
// the ingress node nothing yet.
func fixture() Inventory {
	inv := Inventory{Nodes: []Node{
		{Name: "app", Role: "app", IP: netip.MustParseAddr("10.255.0.1"), Netns: "t-n-app"},
		{Name: "load", Role: "load", IP: netip.MustParseAddr("10.255.0.2"), Netns: "t-n-load"},
		{Name: "ingress", Role: "ingress", IP: netip.MustParseAddr("10.255.0.3"), Netns: "t-n-ingress"},
	}}
	callers := map[string][]string{
		"tier-1-app-a": nil,
		"tier-2-app-a": {"tier-1-app-a"},
		"tier-2-app-b": {"tier-1-app-a"},
		"tier-3-app-a": {"tier-2-app-a", "tier-2-app-b"},
	}
	for i, name := range []string{"tier-1-app-a", "tier-2-app-a", "tier-2-app-b", "tier-3-app-a"} {
		ip := netip.AddrFrom4([4]byte{10, 244, 1, byte(10 + i)})
		pod := name + "-0"
		inv.Pods = append(inv.Pods, Pod{
			Namespace: "ns-1", Name: pod, Node: "app", IP: ip, Netns: "t-p-ns-1_" + pod,
			ServiceAccount: name, Role: metrics.RoleApp,
		})
		inv.Services = append(inv.Services, Service{
			Namespace: "ns-1", Name: name, VIP: netip.AddrFrom4([4]byte{10, 96, 0, byte(10 + i)}), Port: 8080,
			Endpoints: []netip.AddrPort{netip.AddrPortFrom(ip, 8080)}, Callers: callers[name], Entry: i == 0,
		})
	}
	inv.Pods = append(inv.Pods, Pod{
		Namespace: "ns-1", Name: "loadgen-0", Node: "load", IP: netip.MustParseAddr("10.244.2.10"),
		Netns: "t-p-ns-1_loadgen-0", ServiceAccount: "loadgen", Role: metrics.RoleLoad,
	})
	return inv
}

// podNamed finds a pod of an inventory.
func podNamed(inv *Inventory, name string) *Pod {
	for i := range inv.Pods {
		if inv.Pods[i].Name == name {
			return &inv.Pods[i]
		}
	}
	panic(fmt.Sprintf("no pod %s", name))
}
