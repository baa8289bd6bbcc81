package dataplane

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
)

// IstiodAmbient is the ambient data plane with real istiod configuring
// the waypoints (control_plane: istiod): the node proxies keep
// meshbench's configuration, since istiod configures ztunnel through its
// workload API, not Envoy's xDS.
type IstiodAmbient struct{}

// Install starts istiod, mirroring the lab into its API server, then
// everything as IstioAmbient does it, with istiod's waypoints.
func (IstiodAmbient) Install(ctx context.Context, in *Installation) error {
	var err error
	in.plane, err = startIstiod(ctx, in.c, filepath.Join(in.o.Dir, "istiod"), in.inv, in.settings.profile(), in.o.Logger)
	if err != nil {
		return err
	}
	in.o.Logger.Info("istiod configures the waypoints", "istio", in.plane.version)
	return IstioAmbient{}.Install(ctx, in)
}

// Checks are IstioAmbient's plus config-from-istiod.
func (IstiodAmbient) Checks(in *Installation) []func(context.Context) mesh.Check {
	return append(IstioAmbient{}.Checks(in), in.checkIstiodConfig)
}

// Upstream is IstioAmbient's: HBONE to each meshed pod's node proxy.
func (IstiodAmbient) Upstream() upstreamMode { return IstioAmbient{}.Upstream() }

// buildIstiodWaypoint is a waypoint whose listeners and clusters come
// from istiod: Istio's bootstrap essentials with the node type and labels
// `istio-agent proxy waypoint` sends for a pod of the namespace's waypoint
// Gateway, from which istiod finds the Services the waypoint serves.
func buildIstiodWaypoint(pod *Pod, s Settings, dir, planeDir string) *proxy {
	nodeID := fmt.Sprintf("waypoint~%s~%s.%s~%s.svc.cluster.local", pod.IP, pod.Name, pod.Namespace, pod.Namespace)
	p := newProxy("waypoint/"+pod.Namespace+"/"+pod.Name, dir, metrics.RoleWaypoint, nodeID, waypointName+"."+pod.Namespace, s.Workers)
	p.tunnels()
	p.InDir = true
	p.Boot.Node.Metadata = agentMetadata(pod, waypointPodLabels(), waypointName,
		"kubernetes://apis/apps/v1/namespaces/"+pod.Namespace+"/deployments/"+waypointName)
	fromIstiodBootstrap(p, planeDir)
	return p
}

// startIstiodWaypoint runs a waypoint configured by istiod: its pod first,
// which the plane mirrors at its address, then the proxy, with the
// waypoint's certificate from SDS.
func (in *Installation) startIstiodWaypoint(ctx context.Context, spec PodSpec, dir string) (Pod, *proxy, error) {
	pod, err := in.c.AddPod(ctx, spec)
	if err != nil {
		return Pod{}, nil, err
	}
	in.mu.Lock()
	in.pods = append(in.pods, pod)
	in.mu.Unlock()
	if err := in.plane.mirrorWaypoint(ctx, &pod); err != nil {
		return Pod{}, nil, err
	}
	p := buildIstiodWaypoint(&pod, in.settings, dir, in.plane.dir)
	if err := in.plane.register(p.Boot.Node.ID, pod.Identity(), in.ca); err != nil {
		return Pod{}, nil, err
	}
	if err := in.prepare(ctx, p); err != nil {
		return Pod{}, nil, err
	}
	if err := in.c.AddContainer(ctx, pod.Namespace, pod.Name, in.waypointContainer(p)); err != nil {
		return Pod{}, nil, err
	}
	return pod, p, waitReady(ctx, p, in.o.ReadyTimeout)
}

// IdentityLogs are IstioAmbient's, except at the waypoint (the first of
// them): istiod's waypoints log the probe's request, with the HBONE
// peer from filter state (waypointProbeLogFormat), not each tunnel.
func (IstiodAmbient) IdentityLogs(in *Installation, e edge, probe string) []identityLog {
	logs := IstioAmbient{}.IdentityLogs(in, e, probe)
	if len(in.waypoints[e.to.Namespace]) == 0 {
		return logs
	}
	var wl []string
	for _, w := range in.waypoints[e.to.Namespace] {
		wl = append(wl, in.wpProxies[w.Key()].path(probeLogFile))
	}
	logs[0] = identityLog{markLogs(wl...), func(l string) bool { return field(l, "probe") == probe }, e.from.Identity()}
	return logs
}
