package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/dynamic"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/sds"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/xdsrelay"
)

// Sockets in the plane's directory: the xDS relay and SDS, reached by the
// proxies whatever their network namespace.
const (
	relaySocket = "xds.sock"
	sdsSocket   = "sds.sock"
)

// istiodPlane is real istiod configuring the lab's Envoys: a local API
// server (with kwok) holding the lab's mirror, istiod reading it, the
// xDS relay the proxies connect to and the SDS server giving them
// meshbench's certificates.
type istiodPlane struct {
	dir     string
	c       Cluster
	kube    *localkube.Cluster
	istiod  bool // its pod runs in the lab
	relay   *xdsrelay.Relay
	sds     *sds.Server
	version string // istio.io/istio module version istiod was built from
}

// IstiodEtcdQuota bounds the database of the local API server istiod
// reads. Its data is in the lab's state directory, under /run, a tmpfs
// the host's services share: the lab's mirror (its pods, Services and
// policies, and Istio's and the Gateway API's CRDs) needs a few MiB, and
// the API server compacts it every 5 minutes.
const IstiodEtcdQuota = 128 << 20

// IstiodStateBound is at most what that etcd takes of the state
// directory: doctor and the preflight ask for it beside the lab's own.
var IstiodStateBound = localkube.EtcdDiskBound(IstiodEtcdQuota)

// IstiodPrerequisites reports what control_plane istiod needs and is
// missing: istiod's build and the local API server's binaries, each with
// the script that builds it.
func IstiodPrerequisites() error {
	_, err := istiod.Find(localkube.IstiodDir())
	if err != nil {
		err = fmt.Errorf("control_plane istiod: %w", err)
	}
	return errors.Join(err, localkube.CheckBinaries(localkube.BinDir()))
}

// startIstiod starts the control plane for a profile and mirrors the view
// into it. The caller stops it, also after an error.
func startIstiod(ctx context.Context, c Cluster, dir string, v *view, f mesh.Profile, log *slog.Logger) (*istiodPlane, error) {
	build, err := istiod.Find(localkube.IstiodDir())
	if err != nil {
		return nil, fmt.Errorf("control_plane istiod: %w", err)
	}
	if err := localkube.CheckBinaries(localkube.BinDir()); err != nil {
		return nil, fmt.Errorf("control_plane istiod: %w", err)
	}
	// The plane's directory holds the sockets the sidecars' user opens;
	// the API server's keys below it are root's alone.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	kubeDir := filepath.Join(dir, "kube")
	if err := os.Mkdir(kubeDir, 0o700); err != nil && !os.IsExist(err) {
		return nil, err
	}
	pl := &istiodPlane{dir: dir, c: c, version: build.Version}
	pl.kube, err = localkube.Start(ctx, localkube.Options{BinDir: localkube.BinDir(), Dir: kubeDir, EtcdQuota: IstiodEtcdQuota, Log: log})
	if err != nil {
		return pl, fmt.Errorf("control_plane istiod: API server: %w", err)
	}
	dyn, err := dynamic.NewForConfig(pl.kube.Config)
	if err != nil {
		return pl, err
	}
	if err := istiod.InstallCRDs(ctx, dyn, build.CRDs, istioResources["PeerAuthentication"], istioResources["AuthorizationPolicy"]); err != nil {
		return pl, fmt.Errorf("control_plane istiod: %w", err)
	}
	// The Gateway API's, which waypoints (Gateways of class istio-waypoint) need.
	if err := istiod.InstallCRDs(ctx, dyn, build.GatewayCRDs, istioResources["Gateway"]); err != nil {
		return pl, fmt.Errorf("control_plane istiod: %w", err)
	}
	if err := buildMirror(v, f).apply(ctx, pl.kube.Client, dyn); err != nil {
		return pl, err
	}
	if err := pl.startIstiod(ctx, build, controlPlaneNode(v), f); err != nil {
		return pl, err
	}
	pl.relay, err = xdsrelay.New(xdsrelay.Options{Istiod: istiod.XDS, Logger: log,
		Dial: func(ctx context.Context, addr string) (net.Conn, error) {
			return pl.kube.Netns.DialContext(ctx, "tcp", addr)
		}})
	if err != nil {
		return pl, err
	}
	if err := serveSocket(filepath.Join(dir, relaySocket), pl.relay.Serve); err != nil {
		return pl, err
	}
	pl.sds = sds.New()
	if err := serveSocket(filepath.Join(dir, sdsSocket), pl.sds.Serve); err != nil {
		return pl, err
	}
	return pl, nil
}

// serveSocket listens on a Unix socket for the proxies and serves it in
// the background. SDS hands a proxy's private key to whoever names its
// node id, and the relay forwards to istiod: the socket is the proxies'
// user's, mode 0600, and a connection from any other user (root's
// included, which file modes do not stop) is closed before it is served.
func serveSocket(path string, serve func(net.Listener) error) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control_plane istiod: %w", err)
	}
	if err := os.Chmod(path, 0o600); err == nil {
		err = os.Chown(path, proxyUID, proxyUID)
	}
	if err != nil {
		l.Close()
		return fmt.Errorf("control_plane istiod: %w", err)
	}
	go func() { _ = serve(peerListener{l.(*net.UnixListener), proxyUID}) }() // returns when the server stops
	return nil
}

// peerListener accepts only connections whose peer (SO_PEERCRED, the
// credentials it connected with) runs as uid.
type peerListener struct {
	*net.UnixListener
	uid int
}

func (l peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		if uid, err := peerUID(c); err == nil && uid == l.uid {
			return c, nil
		}
		c.Close()
	}
}

// peerUID is the user a Unix socket's peer connected as.
func peerUID(c *net.UnixConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, cerr
	}
	return int(cred.Uid), nil
}

// meshConfig is Istio's defaults plus the access log providers of the
// verification's probe log (a sidecar's, and a waypoint's: see
// waypointProbeLogFormat), written (relative to the proxy's directory)
// for requests carrying the probe header only, as meshbench's own
// configuration writes it; the Telemetry resource in buildMirror turns it
// on for inbound traffic.
var meshConfig = `trustDomain: cluster.local
rootNamespace: ` + systemNamespace + `
extensionProviders:
- name: ` + probeLogProvider + `
  envoyFileAccessLog:
    path: ` + probeLogFile + `
    logFormat:
      text: "` + probeLogFormat + `\n"
- name: ` + waypointProbeLogProvider + `
  envoyFileAccessLog:
    path: ` + probeLogFile + `
    logFormat:
      text: "` + waypointProbeLogFormat + `\n"
`

// The pod istiod runs in, as the lab measures it.
const (
	istiodPod       = "istiod"
	istiodContainer = "discovery"
)

// controlPlaneNode is the node istiod runs on: the mesh node, where the
// kubernetes platform places it, else the load node, else the ingress
// node, else (a lab of app nodes alone) the first node.
func controlPlaneNode(v *view) *Node {
	for _, role := range []infra.NodeRole{infra.NodeMesh, infra.NodeLoad, infra.NodeIngress} {
		for i := range v.Nodes {
			if v.Nodes[i].Role == string(role) {
				return &v.Nodes[i]
			}
		}
	}
	return &v.Nodes[0]
}

// startIstiod runs istiod with Istio's defaults and one CPU's worth of Go
// threads as a pod of the lab on node, so that it is measured as the
// control plane: in a cgroup of its own with the requests Istio's chart
// gives it, pinned with the node's CPUs and sampled with every container.
// Its network is the API server's namespace, holding only loopback.
func (pl *istiodPlane) startIstiod(ctx context.Context, build istiod.Build, node *Node, f mesh.Profile) error {
	d, err := istiod.New(build, istiod.Options{Cluster: pl.kube, Dir: pl.dir, MeshConfig: meshConfig,
		Env: []string{"GOMAXPROCS=1", fmt.Sprintf("PILOT_ENABLE_AMBIENT=%t", f.NodeProxies()),
			// The lab runs each waypoint itself and mirrors it (istiodPlane.mirrorWaypoint).
			"PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER=false"}})
	if err != nil {
		return err
	}
	// The container starts as root with what joining the API server's
	// namespace and dropping to the control plane's user take; istiod
	// itself runs as that user with no capability (localkube.UserCommand).
	spec := PodSpec{Namespace: systemNamespace, Name: istiodPod, Node: node.Name, ServiceAccount: "istiod", HostNetwork: true,
		Containers: []Container{{Name: istiodContainer, Command: d.Command(), Caps: localkube.LauncherCaps,
			Role: metrics.RoleControlPlane, Resources: mesh.IstiodRequests}}}
	pl.istiod = true // recorded first: a pod that half started is removed too
	if _, err := pl.c.AddPod(ctx, spec); err != nil {
		return fmt.Errorf("control_plane istiod: start istiod on node %s: %w", node.Name, err)
	}
	if err := d.WaitReady(ctx); err != nil {
		return fmt.Errorf("control_plane istiod: %w", err)
	}
	return nil
}

// register issues a proxy's workload certificate (RSA 2048, as
// istio-agent asks) for SDS to serve under its node id.
func (pl *istiodPlane) register(node, identity string, ca *CA) error {
	cert, key, err := ca.Issue(identity, RSA2048)
	if err != nil {
		return err
	}
	pl.sds.Register(node, sds.Identity{CertPEM: cert, KeyPEM: key, RootPEM: ca.RootPEM()})
	return nil
}

// stop ends the relay, SDS, istiod's pod and the API server.
func (pl *istiodPlane) stop(ctx context.Context) error {
	if pl == nil {
		return nil
	}
	if pl.relay != nil {
		pl.relay.Stop()
	}
	if pl.sds != nil {
		pl.sds.Stop()
	}
	var err error
	if pl.istiod {
		if err = pl.c.RemovePod(ctx, systemNamespace, istiodPod); err != nil {
			err = fmt.Errorf("control_plane istiod: remove istiod's pod: %w", err)
		}
	}
	if pl.kube != nil {
		pl.kube.Stop(false)
	}
	return err
}
