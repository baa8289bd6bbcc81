package cluster

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// handleAt opens a netlink handle inside a named namespace.
func handleAt(name string) (*netlink.Handle, error) {
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", name, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in %s: %w", name, err)
	}
	return h, nil
}

// setupCloud creates the cloud namespace and its bridge, and returns a
// netlink handle inside it.
func setupCloud(name string) (*netlink.Handle, error) {
	if err := createNetns(name); err != nil {
		return nil, err
	}
	h, err := handleAt(name)
	if err != nil {
		return nil, err
	}
	if err := linkUp(h, "lo"); err != nil {
		h.Close()
		return nil, fmt.Errorf("cloud: %w", err)
	}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: bridgeName}}
	if err := h.LinkAdd(br); err != nil {
		h.Close()
		return nil, fmt.Errorf("cloud: add bridge: %w", err)
	}
	if err := linkUp(h, bridgeName); err != nil {
		h.Close()
		return nil, fmt.Errorf("cloud: %w", err)
	}
	return h, nil
}

// setupNodeNet creates a node's namespace, wires it to the cloud bridge
// and routes every other node's pod range over it. It returns a netlink
// handle inside the node's namespace.
func setupNodeNet(cloud *netlink.Handle, n *node, all []*node) (*netlink.Handle, error) {
	if err := createNetns(n.netns); err != nil {
		return nil, err
	}
	h, err := handleAt(n.netns)
	if err != nil {
		return nil, err
	}
	if err := wireNode(cloud, h, n, all); err != nil {
		h.Close()
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	// Forwarding is what makes the node a router between its pods and
	// the cloud; strict reverse-path filtering would drop hairpin replies.
	if err := setSysctls(n.netns, map[string]string{
		"ipv4.ip_forward":             "1",
		"ipv4.conf.all.rp_filter":     "0",
		"ipv4.conf.default.rp_filter": "0",
	}); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func wireNode(cloud, h *netlink.Handle, n *node, all []*node) error {
	if err := linkUp(h, "lo"); err != nil {
		return err
	}
	nsh, err := netns.GetFromName(n.netns)
	if err != nil {
		return fmt.Errorf("open network namespace: %w", err)
	}
	defer nsh.Close()
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: cloudPortName(n.index)},
		PeerName:      uplinkName,
		PeerNamespace: netlink.NsFd(nsh),
	}
	if err := cloud.LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth to cloud: %w", err)
	}
	br, err := cloud.LinkByName(bridgeName)
	if err != nil {
		return fmt.Errorf("find bridge: %w", err)
	}
	port, err := cloud.LinkByName(veth.Name)
	if err != nil {
		return fmt.Errorf("find cloud port: %w", err)
	}
	if err := cloud.LinkSetMaster(port, br); err != nil {
		return fmt.Errorf("attach to bridge: %w", err)
	}
	if err := cloud.LinkSetUp(port); err != nil {
		return fmt.Errorf("cloud port up: %w", err)
	}
	up, err := h.LinkByName(uplinkName)
	if err != nil {
		return fmt.Errorf("find uplink: %w", err)
	}
	addr := &netlink.Addr{IPNet: ipNet(netip.PrefixFrom(n.ip, NodeNet.Bits()))}
	if err := h.AddrAdd(up, addr); err != nil {
		return fmt.Errorf("address uplink: %w", err)
	}
	if err := h.LinkSetUp(up); err != nil {
		return fmt.Errorf("uplink up: %w", err)
	}
	// Service VIPs must have a route for connections from the node itself:
	// the route is looked up before the OUTPUT DNAT rewrites the address.
	routes := []*netlink.Route{{LinkIndex: up.Attrs().Index, Dst: ipNet(ServiceNet), Scope: netlink.SCOPE_LINK}}
	for _, o := range all {
		if o != n {
			routes = append(routes, &netlink.Route{LinkIndex: up.Attrs().Index, Dst: ipNet(o.podCIDR), Gw: o.ip.AsSlice()})
		}
	}
	for _, r := range routes {
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("route %s: %w", r.Dst, err)
		}
	}
	return nil
}

func linkUp(h *netlink.Handle, name string) error {
	l, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("find %s: %w", name, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
