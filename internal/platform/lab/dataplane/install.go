package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/resources"
)

// Options configure an installation.
type Options struct {
	// Dir holds the proxies' configurations, certificates, admin sockets
	// and logs; it must be traversable by the proxies' user (1337).
	Dir string
	// Envoy is the binary; empty means FindEnvoy.
	Envoy  string
	Logger *slog.Logger
	// ReadyTimeout bounds each proxy's start; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// DefaultReadyTimeout bounds a proxy's start only to catch one that hangs:
// a proxy is ready in about a second on a quiet host, but under qemu's
// emulation (the cgroup v2 test host) five sidecars starting at once on two
// emulated CPUs took over 30 s, and a slow start is not a failed mesh.
const DefaultReadyTimeout = 2 * time.Minute

// Installation is an installed profile: what it runs and how to undo it.
type Installation struct {
	c        Cluster
	o        Options
	settings Settings
	dp       DataPlane
	ca       *CA
	envoy    string
	version  string
	build    string // the Envoy build line (Release.Build)
	inv      *view

	mu        sync.Mutex
	sidecars  map[string]*proxy // pod key -> sidecar
	nodes     map[string]*proxy // node name -> node proxy
	waypoints map[string][]*Pod // namespace -> waypoint pods
	wpProxies map[string]*proxy // waypoint pod key -> proxy
	ingress   *ingressGateway
	plane     *istiodPlane // control_plane istiod: what configures the sidecars or waypoints
	pods      []Pod        // pods AddPod made
	captures  []capture
	records   []ProxyRecord
	validated map[string]*validation // by proxy role
	removed   bool
	logging   bool          // the HBONE log is on for every stream (logStreams)
	stopBound chan struct{} // closed by Remove: ends boundLogs
}

// ProxyRecord is one proxy as recorded with a run's provenance.
type ProxyRecord struct {
	Name         string `json:"name"`
	Role         string `json:"role"`
	ConfigSHA256 string `json:"config_sha256"`
}

// Container and pod names the data planes use; a sidecar's and a
// waypoint's container are named as the profile's family names them.
const (
	nodeProxyName    = "ztunnel"
	waypointName     = "waypoint"
	ingressName      = "istio-ingressgateway"
	ingressContainer = "istio-proxy"
)

// Install installs a profile on the cluster's current workload, then runs
// its verification checks. A failed step or check undoes everything
// installed and returns the checks so far with an error.
func Install(ctx context.Context, c Cluster, spec mesh.MeshSpec, o Options) (*Installation, []mesh.Check, error) {
	s, err := SettingsFor(spec)
	if err != nil {
		return nil, nil, err
	}
	dp, err := dataPlaneFor(s.profile())
	if err != nil {
		return nil, nil, err
	}
	if s.ControlPlane == mesh.ControlPlaneIstiod {
		dp = IstiodSidecar{}
		if s.profile().NodeProxies() {
			dp = IstiodAmbient{}
		}
	}
	if o.Dir == "" {
		return nil, nil, errors.New("mesh install: no directory for proxy files")
	}
	// Proxies do not run as root: each must reach its files.
	if d, err := ClosedAbove(filepath.Join(o.Dir, "x")); err != nil {
		return nil, nil, err
	} else if d != "" {
		return nil, nil, fmt.Errorf("directory %s is not traversable by the proxies' user %d: give the mesh a directory under paths with o+x (mode 0755)", d, proxyUID)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	in := &Installation{
		c: c, o: o, settings: s, dp: dp,
		sidecars: map[string]*proxy{}, nodes: map[string]*proxy{}, waypoints: map[string][]*Pod{}, wpProxies: map[string]*proxy{},
		validated: map[string]*validation{},
	}
	var rel Release
	if o.Envoy == "" {
		in.envoy, rel, err = EnvoyFor(ctx, spec.ProxyVersion)
	} else {
		in.envoy = o.Envoy
		rel, err = EnvoyRelease(ctx, o.Envoy)
	}
	in.version, in.build = rel.Version, rel.Build
	if err != nil {
		return nil, nil, fmt.Errorf("mesh install: %w", err)
	}
	if spec.ProxyVersion != "" && in.version != spec.ProxyVersion {
		return nil, nil, fmt.Errorf("mesh install: proxy_version %s, but %s is Envoy %s", spec.ProxyVersion, in.envoy, in.version)
	}
	if in.ca, err = NewCA(); err != nil {
		return nil, nil, fmt.Errorf("mesh install: %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("mesh install: %w", err)
	}
	if err := in.install(ctx); err != nil {
		if in.plane != nil && in.plane.kube != nil {
			o.Logger.Warn("istiod's log before rollback", "tail", in.plane.kube.LogTail("istiod", 30))
		}
		in.rollback()
		return nil, nil, fmt.Errorf("mesh install %s: %w", s.Profile, err)
	}
	// The HBONE log starts on (connectTerminate); it goes off once
	// verified, unless the mesh logs every stream.
	in.logging = true
	in.settle(ctx)
	checks := in.Verify(ctx)
	if failed := mesh.FailedChecks(checks); failed != "" {
		in.rollback()
		return nil, checks, fmt.Errorf("mesh %s failed verification: %s", s.Profile, failed)
	}
	if !in.settings.AccessLog {
		if err := in.connectLog(ctx, 0); err != nil {
			in.rollback()
			return nil, checks, fmt.Errorf("mesh %s: turn the HBONE log off after verifying: %w", s.Profile, err)
		}
	}
	in.logging = false
	return in, checks, nil
}

func (in *Installation) install(ctx context.Context) error {
	inv, err := in.c.Inventory(ctx)
	if err != nil {
		return err
	}
	in.inv = newView(inv)
	if err := in.dp.Install(ctx, in); err != nil {
		return err
	}
	if f := in.settings.profile(); in.settings.AccessLog && (f.NodeProxies() || f.Waypoint) {
		in.stopBound = make(chan struct{})
		go in.boundLogs(in.stopBound)
	}
	in.o.Logger.Info("mesh installed", "profile", in.settings.Profile, "proxies", len(in.records), "envoy", in.version)
	return nil
}

// connectLogLimit bounds each HBONE log while every stream is logged
// (Settings.AccessLog): one line per request without keep-alive would
// otherwise fill the lab's state directory, on /run, a tmpfs the host's
// services share.
const connectLogLimit = 16 << 20

// boundLogs empties every HBONE log that has grown past connectLogLimit,
// once a second until stop is closed. Envoy writes its access logs in
// append mode, so it goes on from the start of the emptied file.
func (in *Installation) boundLogs(stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		in.mu.Lock()
		var paths []string
		for _, p := range in.nodes {
			paths = append(paths, p.path(connLogFile))
		}
		for _, p := range in.wpProxies {
			paths = append(paths, p.path(connLogFile))
		}
		in.mu.Unlock()
		for _, path := range paths {
			if err := emptyPastLimit(path); err != nil {
				in.o.Logger.Warn("empty an HBONE log", "path", path, "err", err)
			}
		}
	}
}

// emptyPastLimit empties the log at path when it has grown past
// connectLogLimit, through a descriptor of the plain file only (openLog):
// a link the proxies' user planted there is refused, not truncated through.
func emptyPastLimit(path string) error {
	f, err := openLog(path, os.O_WRONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil // not written yet
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= connectLogLimit {
		return err
	}
	return f.Truncate(0)
}

func (in *Installation) applyCapture(ctx context.Context, cp capture) error {
	in.mu.Lock()
	in.captures = append(in.captures, cp) // recorded first: a partial install is removed too
	in.mu.Unlock()
	for _, cm := range cp.Install {
		if _, err := in.c.Run(ctx, cp.Netns, cm.Stdin, cm.Args...); err != nil {
			return fmt.Errorf("capture in %s: %w", cp.Netns, err)
		}
	}
	return nil
}

// prepare writes a proxy's files, has Envoy validate the first of each
// role's configuration, and records it.
func (in *Installation) prepare(ctx context.Context, p *proxy) error {
	sum, err := writeProxy(p, in.ca)
	if err != nil {
		return err
	}
	if err := in.validateOnce(ctx, p); err != nil {
		return err
	}
	in.mu.Lock()
	in.records = append(in.records, ProxyRecord{Name: p.Name, Role: string(p.Role), ConfigSHA256: sum})
	in.mu.Unlock()
	return nil
}

// container is how a proxy runs.
func (in *Installation) container(p *proxy, name string, r resources.Requirements) Container {
	return Container{Name: name, Command: p.command(in.envoy), Role: p.Role, UID: p.UID, GID: p.UID, Caps: p.Caps, Resources: r}
}

// addPod runs a proxy as a pod of its own and waits for it.
func (in *Installation) addPod(ctx context.Context, spec PodSpec, p *proxy) (Pod, error) {
	if err := in.prepare(ctx, p); err != nil {
		return Pod{}, err
	}
	pod, err := in.c.AddPod(ctx, spec)
	if err != nil {
		return Pod{}, err
	}
	in.mu.Lock()
	in.pods = append(in.pods, pod)
	in.mu.Unlock()
	return pod, waitReady(ctx, p, in.o.ReadyTimeout)
}

func (in *Installation) startNodeProxies(ctx context.Context, l4 bool) error {
	g, gctx := errgroup.WithContext(ctx)
	for i := range in.inv.Nodes {
		n := &in.inv.Nodes[i]
		if len(in.inv.meshedPods(n.Name)) == 0 {
			continue
		}
		p := buildNodeProxy(in.inv, n, in.settings, filepath.Join(in.o.Dir, "ztunnel", n.Name), in.waypoints, l4)
		in.nodes[n.Name] = p
		spec := PodSpec{
			Namespace: systemNamespace, Name: nodeProxyName + "-" + n.Name, Node: n.Name, ServiceAccount: nodeProxyName,
			HostNetwork: true, Containers: []Container{in.container(p, nodeProxyName, in.settings.NodeProxy)},
		}
		g.Go(func() error {
			_, err := in.addPod(gctx, spec, p)
			return err
		})
	}
	return g.Wait()
}

func (in *Installation) startSidecars(ctx context.Context, l7 bool) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, pod := range in.inv.meshedPods("") {
		dir := filepath.Join(in.o.Dir, "sidecar", pod.Namespace, pod.Name)
		var p *proxy
		if in.plane != nil {
			p = buildIstiodSidecar(in.inv, pod, in.settings, dir, in.plane.dir)
		} else {
			p = buildSidecar(in.inv, pod, in.settings, dir, l7)
		}
		g.Go(func() error {
			if in.plane != nil {
				if err := in.plane.register(p.Boot.Node.ID, pod.Identity(), in.ca); err != nil {
					return err
				}
			}
			if err := in.prepare(gctx, p); err != nil {
				return err
			}
			if err := in.c.AddContainer(gctx, pod.Namespace, pod.Name, in.container(p, in.settings.profile().Family().SidecarContainer, in.settings.Sidecar)); err != nil {
				return err
			}
			in.mu.Lock()
			in.sidecars[pod.Key()] = p // recorded once it runs: Remove stops exactly these
			in.mu.Unlock()
			return waitReady(gctx, p, in.o.ReadyTimeout)
		})
	}
	return g.Wait()
}
