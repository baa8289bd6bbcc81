package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sync/errgroup"
)

// Lab is a running lab, owned by the process that brought it up: it
// supervises the pods' processes and keeps the Service rules in step
// with readiness. Its methods are safe for concurrent use.
type Lab struct {
	cfg   Config
	log   *slog.Logger
	cg    cgroups
	cloud *netlink.Handle
	nodes []*node

	mu       sync.Mutex
	pods     map[string]*pod
	services map[string]*service
	vips     *allocator
	portID   uint32
	version  uint64 // bumped on every change that touches Service rules
	closed   bool
	fastest  map[int]time.Duration // each CPU's fastest speed probe: see slowdown

	// files is every container's open-file limit (see FileLimit).
	files uint64

	proxy *proxier
	state *stateWriter
	wg    sync.WaitGroup // container supervisors and probers
}

// node is a node's network and address plan.
type node struct {
	NodeConfig
	index   int
	ip      netip.Addr
	podCIDR netip.Prefix
	netns   string
	nl      *netlink.Handle
	ipam    *allocator // under Lab.mu
}

func (n *node) view() Node {
	return Node{Name: n.Name, Role: n.Role, CPUs: n.CPUs, Index: n.index, IP: n.ip, PodCIDR: n.podCIDR, Netns: n.netns}
}

// ErrAlreadyUp means a lab of that name or prefix exists.
var ErrAlreadyUp = errors.New("lab already up")

// Up brings a lab up: the cloud, the nodes and their cgroups. On error it
// removes what it made.
func Up(ctx context.Context, cfg Config) (*Lab, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := preflight(cfg); err != nil {
		return nil, err
	}
	cg, err := detectCgroups(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	// The v1 cpu and cpuset trees are shared by every process on the host,
	// so another lab with this prefix would show here first.
	for _, d := range cg.hierarchies() {
		if _, err := os.Stat(d); err == nil {
			return nil, fmt.Errorf("%w: cgroup %s exists; run meshbench lab down --prefix %s, or use another prefix", ErrAlreadyUp, d, cfg.Prefix)
		}
	}
	files, why, err := FileLimit()
	if err != nil {
		return nil, err
	}
	l := &Lab{cfg: cfg, log: cfg.Logger, cg: cg, pods: map[string]*pod{}, services: map[string]*service{}, vips: serviceAllocator(), files: files}
	for i, nc := range cfg.Nodes {
		idx := i + 1
		cidr := nodePodCIDR(idx)
		l.nodes = append(l.nodes, &node{NodeConfig: nc, index: idx, ip: nodeIP(idx), podCIDR: cidr,
			netns: NodeNetns(cfg.Prefix, nc.Name), ipam: podAllocator(cidr)})
	}
	l.state = newStateWriter(l)
	// The state file comes first, so that a crash at any later point leaves
	// enough for Teardown to find everything.
	if err := l.state.create(); err != nil {
		return nil, err
	}
	if err := l.build(ctx); err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return nil, errors.Join(err, l.teardown(rctx))
	}
	l.proxy = newProxier(l)
	l.proxy.start()
	l.state.start()
	cfg.Logger.Info("lab up", "name", cfg.Name, "nodes", len(l.nodes), "state", cfg.StateDir, "container_open_files", files, "open_files_why", why)
	return l, nil
}

// preflight gives one clear error for each missing requirement.
func preflight(cfg Config) error {
	if os.Geteuid() != 0 {
		return errors.New("the lab needs root (network namespaces, iptables, cgroups): run meshbench as root")
	}
	if _, ok := cfg.Runner.(ExecRunner); ok {
		if _, err := exec.LookPath("iptables-restore"); err != nil {
			return errors.New("iptables-restore not found: install iptables (apt-get install iptables)")
		}
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return errors.New("setpriv not found, which starts every container with its privileges only: install util-linux (apt-get install util-linux)")
	}
	if st, err := readState(cfg.StateDir); err == nil {
		if st.ownerAlive() {
			return fmt.Errorf("%w: lab %s is running (pid %d); use it, or run meshbench lab down --name %s", ErrAlreadyUp, cfg.Name, st.Owner, cfg.Name)
		}
		return fmt.Errorf("%w: lab %s left state in %s (its owner died); run meshbench lab down --name %s", ErrAlreadyUp, cfg.Name, cfg.StateDir, cfg.Name)
	}
	if ns, _ := listNetns(cfg.Prefix); len(ns) > 0 {
		return fmt.Errorf("%w: network namespaces with prefix %s- exist (%s, ...); run meshbench lab down --prefix %s", ErrAlreadyUp, cfg.Prefix, ns[0], cfg.Prefix)
	}
	return nil
}

func (l *Lab) build(ctx context.Context) error {
	if err := l.cg.setupTop(); err != nil {
		return err
	}
	for _, n := range l.nodes {
		if err := l.cg.setupNode(n.Name, n.CPUs); err != nil {
			return err
		}
	}
	cloud, err := setupCloud(CloudNetns(l.cfg.Prefix))
	if err != nil {
		return err
	}
	l.cloud = cloud
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range l.nodes {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			h, err := setupNodeNet(cloud, n, l.nodes)
			if err != nil {
				return err
			}
			n.nl = h
			if _, err := l.cfg.Runner.Run(gctx, restoreCmd(n.netns, renderBase(n.ip))); err != nil {
				return fmt.Errorf("node %s: service rules: %w", n.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// restoreCmd applies iptables-restore input without flushing other chains.
func restoreCmd(netns string, rules []byte) Cmd {
	return Cmd{Netns: netns, Args: []string{"iptables-restore", "--noflush", "--wait"}, Stdin: rules}
}

// Name is the lab's name.
func (l *Lab) Name() string { return l.cfg.Name }

// Prefix is the prefix of the lab's namespaces and cgroups.
func (l *Lab) Prefix() string { return l.cfg.Prefix }

// StateDir is where the lab keeps its state and logs.
func (l *Lab) StateDir() string { return l.cfg.StateDir }

// CgroupVersion is 1 or 2.
func (l *Lab) CgroupVersion() int {
	if l.cg.V2 {
		return 2
	}
	return 1
}

// Nodes returns the nodes in the order they were configured.
func (l *Lab) Nodes() []Node {
	out := make([]Node, len(l.nodes))
	for i, n := range l.nodes {
		out[i] = n.view()
	}
	return out
}

// Node returns the named node.
func (l *Lab) Node(name string) (Node, bool) {
	if n := l.node(name); n != nil {
		return n.view(), true
	}
	return Node{}, false
}

func (l *Lab) node(name string) *node {
	for _, n := range l.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Run runs a command inside one of the lab's network namespaces (a pod's
// or node's Netns), for example iptables-restore; it returns the combined
// output. A namespace not the lab's is refused, the empty name above all:
// to the runner it is the host's own, whose rules a mesh must not touch.
func (l *Lab) Run(ctx context.Context, c Cmd) ([]byte, error) {
	if !strings.HasPrefix(c.Netns, l.Prefix()+"-") {
		return nil, fmt.Errorf("run %s: network namespace %q is not one of lab %s's", strings.Join(c.Args, " "), c.Netns, l.cfg.Name)
	}
	return l.cfg.Runner.Run(ctx, c)
}

// Down stops every process and removes every namespace, cgroup and file
// the lab made.
func (l *Lab) Down(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	pods := make([]*pod, 0, len(l.pods))
	for _, p := range l.pods {
		pods = append(pods, p)
	}
	l.mu.Unlock()
	for _, p := range pods {
		for _, c := range p.containersCopy() {
			c.kill()
		}
	}
	l.wg.Wait()
	l.proxy.stop()
	l.state.stop()
	for _, p := range pods {
		p.closeLog()
	}
	var kept error
	if !l.cfg.KeepLogDir.IsZero() {
		kept = l.keepLogs()
	}
	return errors.Join(kept, l.teardown(ctx))
}

// teardown removes everything by prefix, as Teardown does for a lab whose
// owner died.
func (l *Lab) teardown(ctx context.Context) error {
	for _, n := range l.nodes {
		if n.nl != nil {
			n.nl.Close()
		}
	}
	if l.cloud != nil {
		l.cloud.Close()
	}
	return removeAll(ctx, l.cfg.Prefix, l.cfg.StateDir, []cgroups{l.cg}, l.log)
}

// logDir is where the pods' log files are.
func (l *Lab) logDir() string { return filepath.Join(l.cfg.StateDir, "logs") }
