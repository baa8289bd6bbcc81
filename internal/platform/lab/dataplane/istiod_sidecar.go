package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// IstiodSidecar is the sidecar data plane with real istiod configuring
// the sidecars (control_plane: istiod): the control plane starts first,
// then everything as IstioSidecar does it, with istiod's sidecars.
type IstiodSidecar struct{}

// Install starts istiod, mirroring the lab into its API server, then the
// sidecars, which take their configuration from it.
func (IstiodSidecar) Install(ctx context.Context, in *Installation) error {
	var err error
	in.plane, err = startIstiod(ctx, in.c, filepath.Join(in.o.Dir, "istiod"), in.inv, in.settings.profile(), in.o.Logger)
	if err != nil {
		return err
	}
	in.o.Logger.Info("istiod configures the sidecars", "istio", in.plane.version)
	return IstioSidecar{}.Install(ctx, in)
}

// Checks are IstioSidecar's plus config-from-istiod.
func (IstiodSidecar) Checks(in *Installation) []func(context.Context) mesh.Check {
	return append(IstioSidecar{}.Checks(in), in.checkIstiodConfig)
}

// Upstream is IstioSidecar's: Istio's mutual TLS to each meshed pod.
func (IstiodSidecar) Upstream() upstreamMode { return IstioSidecar{}.Upstream() }

// IdentityLogs are the sidecars' probe logs, as with meshbench's
// configuration: istiod's names the same probe access log.
func (IstiodSidecar) IdentityLogs(in *Installation, e edge, probe string) []identityLog {
	return IstioSidecar{}.IdentityLogs(in, e, probe)
}

// Cluster names Istio's bootstrap gives its xDS and SDS servers; istiod's
// configuration refers to sds-grpc by name.
const (
	xdsCluster = "xds-grpc"
	sdsCluster = "sds-grpc"
)

// buildIstiodSidecar is a sidecar whose listeners and clusters come from
// istiod: Istio's bootstrap essentials (its node id and the metadata
// istio-agent sends, ADS over delta xDS as Istio's default, the sds-grpc
// cluster), with the xDS and SDS servers on the plane's Unix sockets.
func buildIstiodSidecar(v *view, pod *Pod, s Settings, dir, planeDir string) *proxy {
	nodeID := fmt.Sprintf("sidecar~%s~%s.%s~%s.svc.cluster.local", pod.IP, pod.Name, pod.Namespace, pod.Namespace)
	app := appName(v, pod)
	p := newProxy("sidecar/"+pod.Namespace+"/"+pod.Name, dir, metrics.RoleSidecar, nodeID, app+"."+pod.Namespace, s.Workers)
	p.InDir = true
	p.Boot.Node.Metadata = istioNodeMetadata(v, pod, app)
	fromIstiodBootstrap(p, planeDir)
	return p
}

// fromIstiodBootstrap gives a proxy ADS (delta, Istio's default) to the
// xDS relay and the sds-grpc cluster, both on the plane's Unix sockets.
func fromIstiodBootstrap(p *proxy, planeDir string) {
	p.Boot.DynamicResources = envoycfg.ADS(xdsCluster, true)
	p.addCluster(grpcCluster(xdsCluster, filepath.Join(planeDir, relaySocket)))
	p.addCluster(grpcCluster(sdsCluster, filepath.Join(planeDir, sdsSocket)))
}

// grpcCluster is an HTTP/2 cluster of one Unix socket.
func grpcCluster(name, socket string) envoycfg.Cluster {
	addr := envoycfg.PipeAddr(socket)
	return envoycfg.Cluster{
		Name: name, Type: "STATIC", ConnectTimeout: "1s",
		LoadAssignment:  envoycfg.StaticEndpoints(name, &addr),
		ProtocolOptions: envoycfg.HTTP2Options(),
	}
}

// istioNodeMetadata is what istio-agent tells istiod about a sidecar:
// istiod finds the pod's Services, labels and identity from it, and
// shapes its configuration to the proxy's Istio version.
func istioNodeMetadata(v *view, pod *Pod, app string) map[string]any {
	var ports []map[string]any
	for _, port := range v.podPorts(pod) {
		ports = append(ports, map[string]any{"containerPort": port, "protocol": "TCP"})
	}
	podPorts, _ := json.Marshal(ports)
	md := agentMetadata(pod, podLabels(v, pod, true), app, "kubernetes://apis/v1/namespaces/"+pod.Namespace+"/pods/"+pod.Name)
	md["APP_CONTAINERS"] = "app"
	md["POD_PORTS"] = string(podPorts)
	return md
}

// agentMetadata is the node metadata istio-agent sends for any proxy in a
// pod: its identity, labels, workload and address.
func agentMetadata(pod *Pod, labels map[string]string, workload, owner string) map[string]any {
	return map[string]any{
		"ISTIO_VERSION":     istiod.ProxyVersion,
		"CLUSTER_ID":        "Kubernetes",
		"MESH_ID":           TrustDomain,
		"NAMESPACE":         pod.Namespace,
		"NAME":              pod.Name,
		"SERVICE_ACCOUNT":   pod.ServiceAccount,
		"WORKLOAD_NAME":     workload,
		"OWNER":             owner,
		"LABELS":            labels,
		"INSTANCE_IPS":      pod.IP.String(),
		"INTERCEPTION_MODE": "REDIRECT",
	}
}
