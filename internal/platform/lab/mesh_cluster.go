package lab

import (
	"context"
	"net"
	"slices"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/topology"
)

// meshCluster is the lab as internal/platform/lab/dataplane sees it.
type meshCluster struct {
	l *cluster.Lab
	g *topology.Graph
}

var _ dataplane.Cluster = (*meshCluster)(nil)

// Inventory implements dataplane.Cluster. Callers and the entry come from the
// deployed graph; a pod's role from the label Deploy puts on it.
func (c *meshCluster) Inventory(ctx context.Context) (dataplane.Inventory, error) {
	var inv dataplane.Inventory
	for _, n := range c.l.Nodes() {
		inv.Nodes = append(inv.Nodes, dataplane.Node{Name: n.Name, Role: n.Role, IP: n.IP, Netns: n.Netns})
	}
	for _, p := range c.l.Pods() {
		inv.Pods = append(inv.Pods, dataplane.Pod{
			Namespace: p.Namespace, Name: p.Name, Node: p.Node, IP: p.IP, Netns: p.Netns,
			ServiceAccount: p.ServiceAccount, Role: metrics.Role(p.Labels[LabelRole]), HostNetwork: p.HostNetwork,
		})
	}
	callers := map[string][]string{}
	protocols := map[string][]topology.Protocol{}
	for _, s := range c.g.Services {
		for _, callee := range c.g.Calls(s.Name) {
			callers[callee] = append(callers[callee], s.Name)
		}
		for _, e := range c.g.Edges(s.Name) {
			if !slices.Contains(protocols[e.Service], e.Protocol) {
				protocols[e.Service] = append(protocols[e.Service], e.Protocol)
			}
		}
	}
	for _, s := range c.l.Services() {
		inv.Services = append(inv.Services, dataplane.Service{
			Namespace: s.Namespace, Name: s.Name, VIP: s.VIP, Port: s.Port, Endpoints: s.Endpoints,
			Callers: callers[s.Name], Protocols: protocols[s.Name], Entry: s.Name == c.g.Entry,
		})
	}
	return inv, ctx.Err()
}

func labContainer(m dataplane.Container) cluster.ContainerSpec {
	return cluster.ContainerSpec{
		Name: m.Name, Command: m.Command, Role: m.Role, UID: m.UID, GID: m.GID, Caps: m.Caps, Resources: m.Resources,
	}
}

// AddContainer implements dataplane.Cluster.
func (c *meshCluster) AddContainer(ctx context.Context, namespace, pod string, m dataplane.Container) error {
	return c.l.AddContainer(ctx, namespace, pod, labContainer(m))
}

// RemoveContainer implements dataplane.Cluster.
func (c *meshCluster) RemoveContainer(ctx context.Context, namespace, pod, name string) error {
	return c.l.RemoveContainer(ctx, namespace, pod, name)
}

// AddPod implements dataplane.Cluster.
func (c *meshCluster) AddPod(ctx context.Context, s dataplane.PodSpec) (dataplane.Pod, error) {
	spec := cluster.PodSpec{Namespace: s.Namespace, Name: s.Name, Node: s.Node, ServiceAccount: s.ServiceAccount, HostNetwork: s.HostNetwork}
	for _, m := range s.Containers {
		spec.Containers = append(spec.Containers, labContainer(m))
	}
	if err := c.l.CreatePods(ctx, []cluster.PodSpec{spec}); err != nil {
		return dataplane.Pod{}, err
	}
	p, _ := c.l.Pod(s.Namespace, s.Name)
	return dataplane.Pod{Namespace: p.Namespace, Name: p.Name, Node: p.Node, IP: p.IP, Netns: p.Netns,
		ServiceAccount: p.ServiceAccount, HostNetwork: p.HostNetwork}, nil
}

// RemovePod implements dataplane.Cluster.
func (c *meshCluster) RemovePod(ctx context.Context, namespace, name string) error {
	return c.l.DeletePods(ctx, namespace+"/"+name)
}

// Run implements dataplane.Cluster.
func (c *meshCluster) Run(ctx context.Context, netns string, stdin []byte, args ...string) ([]byte, error) {
	return c.l.Run(ctx, cluster.Cmd{Netns: netns, Args: args, Stdin: stdin})
}

// Dial implements dataplane.Cluster.
func (c *meshCluster) Dial(ctx context.Context, netns, addr string) (net.Conn, error) {
	return c.l.Dial(ctx, netns, addr)
}
