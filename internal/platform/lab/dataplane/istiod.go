package dataplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/localkube"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/sds"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/xdsrelay"
)

// istioProxyVersion is the Istio version the lab's Envoys report to
// istiod (the VERSION of the istio.io/istio module istiod is built
// from): istiod shapes its configuration to the proxy's version.
const istioProxyVersion = "1.31.0"

// istiod's addresses inside the control plane's namespace.
const (
	istiodXDS   = "127.0.0.1:15010"
	istiodReady = "http://127.0.0.1:8080/ready"
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

// istiodBuild finds istiod and Istio's CRDs, built by
// scripts/istiod-build.sh, naming the fix when they are missing.
func istiodBuild() (binary, crds, version string, err error) {
	dir := localkube.IstiodDir()
	binary, crds = filepath.Join(dir, "bin", "pilot-discovery"), filepath.Join(dir, "crds.yaml")
	v, verr := os.ReadFile(filepath.Join(dir, "version"))
	st, berr := os.Stat(binary)
	_, cerr := os.Stat(crds)
	if verr != nil || berr != nil || st.Mode()&0o111 == 0 || cerr != nil {
		return "", "", "", fmt.Errorf("control_plane istiod: istiod is not built in %s; build it with scripts/istiod-build.sh (or set %s)", dir, localkube.IstiodDirEnv)
	}
	return binary, crds, string(bytes.TrimSpace(v)), nil
}

// IstiodPrerequisites reports what control_plane istiod needs and is
// missing: istiod's build and the local API server's binaries, each with
// the script that builds it.
func IstiodPrerequisites() error {
	_, _, _, err := istiodBuild()
	return errors.Join(err, localkube.CheckBinaries(localkube.BinDir()))
}

// startIstiod starts the control plane for a profile and mirrors the view
// into it. The caller stops it, also after an error.
func startIstiod(ctx context.Context, c Cluster, dir string, v *view, f mesh.Profile, log *slog.Logger) (*istiodPlane, error) {
	binary, crds, version, err := istiodBuild()
	if err != nil {
		return nil, err
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
	pl := &istiodPlane{dir: dir, c: c, version: version}
	pl.kube, err = localkube.Start(ctx, localkube.Options{BinDir: localkube.BinDir(), Dir: kubeDir, Log: log})
	if err != nil {
		return pl, fmt.Errorf("control_plane istiod: API server: %w", err)
	}
	dyn, err := dynamic.NewForConfig(pl.kube.Config)
	if err != nil {
		return pl, err
	}
	if err := installCRDs(ctx, dyn, crds); err != nil {
		return pl, fmt.Errorf("control_plane istiod: %w", err)
	}
	if err := buildMirror(v, f).apply(ctx, pl.kube.Client, dyn); err != nil {
		return pl, err
	}
	if err := pl.startIstiod(ctx, binary, controlPlaneNode(v), f); err != nil {
		return pl, err
	}
	pl.relay, err = xdsrelay.New(xdsrelay.Options{Istiod: istiodXDS, Logger: log,
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

// serveSocket listens on a Unix socket any proxy user can connect to and
// serves it in the background.
func serveSocket(path string, serve func(net.Listener) error) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control_plane istiod: %w", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return fmt.Errorf("control_plane istiod: %w", err)
	}
	go func() { _ = serve(l) }() // returns when the server stops
	return nil
}

// meshConfig is Istio's defaults plus one access log provider: the
// verification's probe log, written (relative to the proxy's directory)
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

// startIstiod runs istiod with Istio's defaults, one CPU's worth of Go
// threads, and no webhooks (nothing patches configurations here). It runs
// as a pod of the lab on node, so that it is measured as the control
// plane: in a cgroup of its own with the requests Istio's chart gives it,
// pinned with the node's CPUs and sampled with every container. Its
// network is the API server's namespace (nsenter), holding only
// loopback: it reaches the API server and serves xDS there, and its log
// goes where the API server's processes' logs go.
func (pl *istiodPlane) startIstiod(ctx context.Context, binary string, node *Node, f mesh.Profile) error {
	meshFile := filepath.Join(pl.dir, "mesh.yaml")
	if err := os.WriteFile(meshFile, []byte(meshConfig), 0o644); err != nil {
		return err
	}
	env := []string{
		"PATH=/usr/bin:/bin", "HOME=" + pl.dir,
		"POD_NAMESPACE=" + systemNamespace, "POD_NAME=istiod-0", "REVISION=default", "CLUSTER_ID=Kubernetes",
		"VALIDATION_WEBHOOK_CONFIG_NAME=", "INJECTION_WEBHOOK_CONFIG_NAME=",
		"GOMAXPROCS=1", fmt.Sprintf("PILOT_ENABLE_AMBIENT=%t", f.NodeProxies()),
	}
	args := []string{"discovery", "--kubeconfig", pl.kube.Kubeconfig, "--meshConfig", meshFile,
		"--networksConfig", filepath.Join(pl.dir, "meshNetworks.yaml"),
		"--httpAddr", "127.0.0.1:8080", "--grpcAddr", istiodXDS, "--secureGRPCAddr", "127.0.0.1:15012",
		"--monitoringAddr", "127.0.0.1:15014", "--httpsAddr", "127.0.0.1:15017",
		"--log_output_level", "default:warn", "--log_target", filepath.Join(pl.kube.Dir, "istiod.log")}
	cmd := append([]string{"nsenter", "--net=" + pl.kube.Netns.Path(), "--", "env", "-i", "-C", pl.kube.Dir}, env...)
	cmd = append(append(cmd, binary), args...)
	spec := PodSpec{Namespace: systemNamespace, Name: istiodPod, Node: node.Name, ServiceAccount: "istiod", HostNetwork: true,
		Containers: []Container{{Name: istiodContainer, Command: cmd, Role: metrics.RoleControlPlane, Resources: mesh.IstiodRequests}}}
	pl.istiod = true // recorded first: a pod that half started is removed too
	if _, err := pl.c.AddPod(ctx, spec); err != nil {
		return fmt.Errorf("control_plane istiod: start istiod on node %s: %w", node.Name, err)
	}
	if err := pl.kube.WaitHTTP(ctx, istiodReady, 3*time.Minute); err != nil {
		return fmt.Errorf("control_plane istiod: istiod not ready: %w; log tail:\n%s", err, pl.kube.LogTail("istiod", 20))
	}
	return nil
}

var gvrCRD = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates the CRDs in a YAML stream and waits until the
// resources the mirror writes are served.
func installCRDs(ctx context.Context, dyn dynamic.Interface, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(b), 64<<10)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if obj == nil || u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := dyn.Resource(gvrCRD).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, kind := range []string{"PeerAuthentication", "AuthorizationPolicy"} {
			if _, err := dyn.Resource(istioResources[kind]).Namespace(systemNamespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
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
