package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/topology"
)

// Labels the platform puts on its pods.
const (
	LabelApp     = "app"
	LabelVersion = "version"
	// LabelRole is the pod's metrics.Role: "app" or "load".
	LabelRole = "meshbench.io/role"
	// LabelSpec fingerprints the spec, so a redeploy keeps unchanged pods.
	LabelSpec = "meshbench.io/spec"
)

// LoadPodName is the load-generator pod of each namespace; its
// ServiceAccount is LoadServiceAccount.
const (
	LoadPodName        = "load"
	LoadServiceAccount = "load-generator"
)

// loadPodSysctls are the load pod's network settings, as load testers
// tune a generator's machine: a connection search holds tens of
// thousands of connections to one Service address from one pod, and each
// trial's generator leaves its closed ones in TIME_WAIT for a minute.
// With the kernel's defaults (28,232 ephemeral ports, TIME_WAIT reused
// on loopback only) the next trial's connects fail with EADDRNOTAVAIL.
// The port range is as wide as it goes: connect() tries the range's even
// ports first, and once those to the address are taken every further
// connect scans them all (16,000 connections cost a generator 2 s of
// CPU where 8,000 cost 0.3 s), so a generator holds cheaply about half
// the range, 32,000 connections here. The ports the lab's proxies listen
// on (15000 to 15100) are reserved, so that no connection takes one that
// a proxy restarting in the pod binds. Kubernetes counts the port range
// and the reserved ports safe sysctls, which any pod may set (the latter
// since 1.27), and net.ipv4.tcp_tw_reuse an unsafe one, which a kubelet
// must allow (--allowed-unsafe-sysctls) before a pod setting it starts.
func loadPodSysctls() map[string]string {
	return map[string]string{
		"net.ipv4.ip_local_port_range":     "1024 65535",
		"net.ipv4.ip_local_reserved_ports": "15000-15100",
		"net.ipv4.tcp_tw_reuse":            "1",
	}
}

// OutsidePodName is each namespace's client outside the cluster, for the
// ingress path: a host-network pod on the client node (else a load node),
// which no mesh captures, as LiveWyer's VM calling the gateway was.
const OutsidePodName = "outside-client"

// DefaultReadyTimeout bounds Deploy's wait for readiness when the context
// has no deadline.
const DefaultReadyTimeout = 3 * time.Minute

// workload is what Deploy made.
type workload struct {
	w          platform.Workload
	namespaces []string
	pods       map[string]string // key -> spec fingerprint
	services   map[string]bool   // key
}

// Deploy implements platform.Platform. It applies one Service per graph
// service and namespace, one pod per replica on the app nodes, and one
// (container-less) load-generator pod per namespace on the load nodes;
// pods whose spec did not change are kept, so a replica sweep only adds
// or removes replicas.
func (p *labPlatform) Deploy(ctx context.Context, w platform.Workload) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, err := p.running()
	if err != nil {
		return err
	}
	if w.Graph == nil || w.Namespaces < 1 {
		return errors.New("deploy: the workload needs a graph and at least one namespace")
	}
	bin, err := p.o.bin()
	if err != nil {
		return err
	}
	graphFile, err := writeGraph(l.StateDir(), w.Graph)
	if err != nil {
		return err
	}
	// Apps do not run as root: each must reach the graph.
	if d, err := dataplane.ClosedAbove(graphFile); err != nil {
		return fmt.Errorf("deploy: %w", err)
	} else if d != "" {
		return fmt.Errorf("deploy: directory %s is not traversable by the apps' user %d: give the lab a state directory under paths with o+x (mode 0755)", d, AppUID)
	}
	// The lab is the record of which pods exist, even after a failed
	// Deploy; Services are the platform's own record.
	old := &workload{pods: map[string]string{}, services: map[string]bool{}}
	if p.wl != nil {
		old.services = p.wl.services
	}
	for _, pod := range l.Pods() {
		if h, ok := pod.Labels[LabelSpec]; ok {
			old.pods[pod.Key()] = h
		}
	}
	next := &workload{w: w, namespaces: topology.Namespaces(w.Namespaces), pods: map[string]string{}, services: map[string]bool{}}

	// Services first: the pods' upstream flags carry their VIPs.
	vips := map[string]string{} // namespace/service -> VIP:port
	for _, ns := range next.namespaces {
		for _, s := range w.Graph.Services {
			svc, err := l.ApplyService(ctx, cluster.ServiceSpec{Namespace: ns, Name: s.Name,
				Selector: map[string]string{LabelApp: s.Name}, Port: s.Port})
			if err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
			next.services[svc.Key()] = true
			vips[svc.Key()] = svc.Addr().String()
		}
	}
	for k := range old.services {
		if !next.services[k] {
			ns, name, _ := strings.Cut(k, "/")
			if err := l.DeleteService(ctx, ns, name); err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
		}
	}

	specs, err := planPods(w, l.Nodes(), bin, graphFile, vips)
	if err != nil {
		return err
	}
	var create []cluster.PodSpec
	var remove []string
	for _, s := range specs {
		key := s.Namespace + "/" + s.Name
		next.pods[key] = s.Labels[LabelSpec]
		if old.pods[key] != s.Labels[LabelSpec] {
			create = append(create, s)
			if _, ok := old.pods[key]; ok {
				remove = append(remove, key)
			}
		}
	}
	for k := range old.pods {
		if _, ok := next.pods[k]; !ok {
			remove = append(remove, k)
		}
	}
	p.o.Logger.Info("deploy", "graph", w.Graph.Name, "namespaces", w.Namespaces, "create", len(create), "remove", len(remove))
	p.wl = next
	if err := l.DeletePods(ctx, remove...); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	if err := l.CreatePods(ctx, create); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	wctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, DefaultReadyTimeout)
		defer cancel()
	}
	if err := l.WaitReady(wctx); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	return nil
}

// writeGraph stores the graph where pods read it, named by its content.
func writeGraph(stateDir string, g *topology.Graph) (string, error) {
	b, err := g.Marshal()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	path := filepath.Join(stateDir, "graph-"+hex.EncodeToString(sum[:6])+".yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("deploy: write graph: %w", err)
	}
	return path, nil
}

// planPods lists every pod of the workload. App pods spread over the app
// nodes by a function of their namespace, deployment and replica index
// only, so changing one deployment's replica count moves no other pod.
func planPods(w platform.Workload, nodes []cluster.Node, bin, graphFile string, vips map[string]string) ([]cluster.PodSpec, error) {
	appNodes := nodesWithRole(nodes, infra.NodeApp)
	if len(appNodes) == 0 {
		return nil, errors.New("deploy: the lab has no node with role app")
	}
	loadNodes := nodesWithRole(nodes, infra.NodeLoad)
	if len(loadNodes) == 0 {
		loadNodes = appNodes
	}
	clientNodes := outsideNodes(nodes)
	var out []cluster.PodSpec
	for nsIdx, ns := range topology.Namespaces(w.Namespaces) {
		for depIdx, d := range w.Graph.Deployments() {
			for i := range w.ReplicasOf(d) {
				node := appNodes[(nsIdx+depIdx+i)%len(appNodes)]
				out = append(out, appPod(w.Graph, d, ns, i, node, bin, graphFile, vips))
			}
		}
		out = append(out, cluster.PodSpec{Namespace: ns, Name: LoadPodName, Node: loadNodes[nsIdx%len(loadNodes)].Name,
			ServiceAccount: LoadServiceAccount, Labels: map[string]string{LabelRole: string(metrics.RoleLoad)},
			Sysctls: loadPodSysctls()})
		if len(clientNodes) > 0 {
			out = append(out, cluster.PodSpec{Namespace: ns, Name: OutsidePodName, Node: clientNodes[nsIdx%len(clientNodes)].Name,
				HostNetwork: true, Labels: map[string]string{LabelRole: string(metrics.RoleLoad)}})
		}
	}
	for i := range out {
		out[i].Labels[LabelSpec] = fingerprint(out[i])
	}
	return out, nil
}

// AppUID is the user app containers run as, with no capability but
// CAP_NET_BIND_SERVICE for a port below 1024 (the user distroless images
// name "nonroot"): an app needs no other privilege, and one that
// misbehaves can then write none of the host's files.
const AppUID = 65532

func appPod(g *topology.Graph, d topology.Deployment, ns string, i int, node cluster.Node, bin, graphFile string, vips map[string]string) cluster.PodSpec {
	name := d.Name + "-" + strconv.Itoa(i)
	cmd := []string{bin, "app", "--graph", graphFile, "--service", d.Service, "--namespace", ns, "--pod", name,
		"--listen", ":" + strconv.Itoa(d.Port)}
	if d.Name != d.Service {
		cmd = append(cmd, "--version", d.Version)
	}
	for _, up := range g.Calls(d.Service) {
		cmd = append(cmd, "--upstream", up+"="+vips[ns+"/"+up])
	}
	var caps []string
	if d.Port < 1024 {
		caps = []string{"net_bind_service"} // a graph's port 80: the one privilege such an app needs
	}
	return cluster.PodSpec{
		Namespace: ns, Name: name, Node: node.Name, ServiceAccount: d.ServiceAccount,
		Labels: map[string]string{LabelApp: d.Service, LabelVersion: d.Version, LabelRole: string(metrics.RoleApp)},
		Containers: []cluster.ContainerSpec{{
			Name: "app", Command: cmd, Role: metrics.RoleApp, UID: AppUID, GID: AppUID, Caps: caps,
			Resources: d.Resources.Requirements(),
			Readiness: &cluster.Probe{Port: d.Port, Path: "/readyz"},
		}},
	}
}

// outsideNodes are where the ingress path's clients run: the client
// nodes, else the load nodes; never an app node, where the client's
// network would be the application's.
func outsideNodes(nodes []cluster.Node) []cluster.Node {
	if c := nodesWithRole(nodes, infra.NodeClient); len(c) > 0 {
		return c
	}
	return nodesWithRole(nodes, infra.NodeLoad)
}

func nodesWithRole(nodes []cluster.Node, role infra.NodeRole) []cluster.Node {
	var out []cluster.Node
	for _, n := range nodes {
		if n.Role == string(role) {
			out = append(out, n)
		}
	}
	return out
}

// fingerprint hashes a pod spec without its fingerprint label.
func fingerprint(s cluster.PodSpec) string {
	labels := map[string]string{}
	for k, v := range s.Labels {
		if k != LabelSpec {
			labels[k] = v
		}
	}
	s.Labels = labels
	b, _ := json.Marshal(s) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
