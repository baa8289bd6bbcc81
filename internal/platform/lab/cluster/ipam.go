package cluster

import (
	"fmt"
	"net/netip"
)

// The lab's address plan. Nothing outside these ranges is routable from
// any of the lab's namespaces.
var (
	// NodeNet holds node addresses on the cloud bridge: node i (from 1)
	// is 10.255.0.i.
	NodeNet = netip.MustParsePrefix("10.255.0.0/24")
	// PodNet holds every node's pod range: node i owns 10.244.i.0/24.
	PodNet = netip.MustParsePrefix("10.244.0.0/16")
	// ServiceNet holds Service virtual IPs.
	ServiceNet = netip.MustParsePrefix("10.96.0.0/16")
	// PodGateway is every pod's next hop, answered by the node's end of
	// the pod's veth (the way Calico uses 169.254.1.1).
	PodGateway = netip.MustParseAddr("169.254.1.1")
)

// maxNodes keeps node indexes inside one byte of the address plan.
const maxNodes = 250

// nodeIP is the address of node i (from 1).
func nodeIP(i int) netip.Addr {
	b := NodeNet.Addr().As4()
	b[3] = byte(i)
	return netip.AddrFrom4(b)
}

// nodePodCIDR is the pod range of node i (from 1).
func nodePodCIDR(i int) netip.Prefix {
	b := PodNet.Addr().As4()
	b[2] = byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(b), 24)
}

// allocator hands out addresses of a range in order, wrapping around and
// skipping those in use, so a freed address is not reused at once (stale
// conntrack entries would still point at it). Not safe for concurrent use.
type allocator struct {
	first, last netip.Addr // inclusive
	next        netip.Addr
	used        map[netip.Addr]bool
}

// newAllocator covers [first, last].
func newAllocator(first, last netip.Addr) *allocator {
	return &allocator{first: first, last: last, next: first, used: map[netip.Addr]bool{}}
}

// podAllocator covers a node's pod range less its network, .1 and
// broadcast addresses.
func podAllocator(cidr netip.Prefix) *allocator {
	b := cidr.Addr().As4()
	b[3] = 2
	first := netip.AddrFrom4(b)
	b[3] = 254
	return newAllocator(first, netip.AddrFrom4(b))
}

// serviceAllocator covers ServiceNet from .0.10, as kube-apiserver leaves
// the first addresses for well-known Services.
func serviceAllocator() *allocator {
	b := ServiceNet.Addr().As4()
	b[3] = 10
	first := netip.AddrFrom4(b)
	b[2], b[3] = 255, 254
	return newAllocator(first, netip.AddrFrom4(b))
}

// Allocate returns the next free address.
func (a *allocator) Allocate() (netip.Addr, error) {
	ip := a.next
	for {
		cur := ip
		ip = ip.Next()
		if !ip.IsValid() || a.last.Less(ip) {
			ip = a.first
		}
		if !a.used[cur] {
			a.used[cur] = true
			a.next = ip
			return cur, nil
		}
		if ip == a.next {
			return netip.Addr{}, fmt.Errorf("address range %s-%s is full", a.first, a.last)
		}
	}
}

// Reserve marks a given address used; it fails when the address is out
// of range or taken.
func (a *allocator) Reserve(ip netip.Addr) error {
	if ip.Less(a.first) || a.last.Less(ip) {
		return fmt.Errorf("address %s is outside %s-%s", ip, a.first, a.last)
	}
	if a.used[ip] {
		return fmt.Errorf("address %s is in use", ip)
	}
	a.used[ip] = true
	return nil
}

// Release frees an address.
func (a *allocator) Release(ip netip.Addr) { delete(a.used, ip) }
