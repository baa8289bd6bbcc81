package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Static neighbour entries on both ends of a pod's veth make ARP
// unnecessary: the pod's gateway 169.254.1.1 is the node end's MAC, and
// the node knows the pod's MAC. The MACs are locally administered.
func podMAC(ip netip.Addr) net.HardwareAddr {
	b := ip.As4()
	return net.HardwareAddr{0x0a, 0x58, b[0], b[1], b[2], b[3]}
}

func portMAC(id uint32) net.HardwareAddr {
	return net.HardwareAddr{0x0e, 0xe0, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
}

// podRoutes are the only destinations a pod can reach: pods, Services and
// nodes. There is no default route, so any other address fails at once
// with "network is unreachable" and no packet leaves the pod.
var podRoutes = []netip.Prefix{PodNet, ServiceNet, NodeNet}

// setupPodNet creates a pod's namespace and its veth to the node.
func setupPodNet(nodeH *netlink.Handle, podNetns string, ip netip.Addr, id uint32) error {
	if err := createNetns(podNetns); err != nil {
		return err
	}
	h, err := handleAt(podNetns)
	if err != nil {
		return err
	}
	defer h.Close()
	nsh, err := netns.GetFromName(podNetns)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", podNetns, err)
	}
	defer nsh.Close()
	port := podPortName(id)
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: port, HardwareAddr: portMAC(id)},
		PeerName:         uplinkName,
		PeerHardwareAddr: podMAC(ip),
		PeerNamespace:    netlink.NsFd(nsh),
	}
	if err := nodeH.LinkAdd(veth); err != nil {
		return fmt.Errorf("pod %s: add veth: %w", podNetns, err)
	}
	if err := wireNodeEnd(nodeH, port, ip); err != nil {
		return fmt.Errorf("pod %s: node end: %w", podNetns, err)
	}
	if err := wirePodEnd(h, ip, portMAC(id)); err != nil {
		return fmt.Errorf("pod %s: %w", podNetns, err)
	}
	return nil
}

func wireNodeEnd(h *netlink.Handle, port string, ip netip.Addr) error {
	l, err := h.LinkByName(port)
	if err != nil {
		return fmt.Errorf("find %s: %w", port, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("set %s up: %w", port, err)
	}
	idx := l.Attrs().Index
	if err := h.RouteAdd(&netlink.Route{LinkIndex: idx, Dst: ipNet(netip.PrefixFrom(ip, 32)), Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("route to pod: %w", err)
	}
	n := &netlink.Neigh{LinkIndex: idx, Family: unix.AF_INET, State: netlink.NUD_PERMANENT, IP: ip.AsSlice(), HardwareAddr: podMAC(ip)}
	if err := h.NeighSet(n); err != nil {
		return fmt.Errorf("neighbour for pod: %w", err)
	}
	return nil
}

func wirePodEnd(h *netlink.Handle, ip netip.Addr, gwMAC net.HardwareAddr) error {
	if err := linkUp(h, "lo"); err != nil {
		return err
	}
	l, err := h.LinkByName(uplinkName)
	if err != nil {
		return fmt.Errorf("find %s: %w", uplinkName, err)
	}
	idx := l.Attrs().Index
	if err := h.AddrAdd(l, &netlink.Addr{IPNet: ipNet(netip.PrefixFrom(ip, 32))}); err != nil {
		return fmt.Errorf("address %s: %w", ip, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("set %s up: %w", uplinkName, err)
	}
	gw := netip.PrefixFrom(PodGateway, 32)
	if err := h.RouteAdd(&netlink.Route{LinkIndex: idx, Dst: ipNet(gw), Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("route to gateway: %w", err)
	}
	n := &netlink.Neigh{LinkIndex: idx, Family: unix.AF_INET, State: netlink.NUD_PERMANENT, IP: PodGateway.AsSlice(), HardwareAddr: gwMAC}
	if err := h.NeighSet(n); err != nil {
		return fmt.Errorf("neighbour for gateway: %w", err)
	}
	for _, p := range podRoutes {
		if err := h.RouteAdd(&netlink.Route{LinkIndex: idx, Dst: ipNet(p), Gw: PodGateway.AsSlice()}); err != nil {
			return fmt.Errorf("route %s: %w", p, err)
		}
	}
	return nil
}

// teardownPodNet removes a pod's veth (and with it the node's route to
// the pod) and its namespace. Missing pieces are not errors.
func teardownPodNet(nodeH *netlink.Handle, podNetns string, id uint32) error {
	var errs []error
	if l, err := nodeH.LinkByName(podPortName(id)); err == nil {
		if err := nodeH.LinkDel(l); err != nil {
			errs = append(errs, fmt.Errorf("delete veth of %s: %w", podNetns, err))
		}
	}
	if err := deleteNetns(podNetns); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
