package dataplane

import (
	"context"
	"fmt"

	"github.com/meshbench/meshbench/internal/mesh"
)

// IstioSidecar is the Istio-style sidecar data plane: an Envoy container
// in every meshed pod, named as the profile's family names it, with the
// pod's traffic redirected to it by iptables, as istio-init does.
type IstioSidecar struct{}

// Install starts the ingress gateway and every meshed pod's sidecar, then
// captures each pod's traffic.
func (IstioSidecar) Install(ctx context.Context, in *Installation) error {
	if err := in.startIngress(ctx); err != nil {
		return err
	}
	if err := in.startSidecars(ctx, in.settings.profile().L7Policy); err != nil {
		return err
	}
	// Capture last, once every proxy answers, so that no connection is
	// redirected to a proxy that is not there yet.
	for _, p := range in.inv.meshedPods("") {
		if err := in.applyCapture(ctx, sidecarCapture(p.Netns)); err != nil {
			return err
		}
	}
	return in.resetConnections(ctx)
}

// IdentityLogs: the callee's sidecars log each inbound request that
// carries the probe header, with the peer certificate's identity.
func (IstioSidecar) IdentityLogs(in *Installation, e edge, probe string) []identityLog {
	var logs []string
	for _, b := range in.inv.backends(e.to) {
		if p := in.sidecars[b.Key()]; p != nil {
			logs = append(logs, p.path(probeLogFile))
		}
	}
	return []identityLog{{markLogs(logs...), func(l string) bool { return field(l, "probe") == probe }, e.from.Identity()}}
}

// Upstream is Istio's mutual TLS to each meshed pod's sidecar.
func (IstioSidecar) Upstream() upstreamMode { return mtlsUpstream }

// Checks check that each meshed pod's own namespace redirects its
// traffic to its sidecar, and that the sidecar is ready.
func (IstioSidecar) Checks(in *Installation) []func(context.Context) mesh.Check {
	return []func(context.Context) mesh.Check{func(ctx context.Context) mesh.Check {
		return in.checkCaptured(ctx, func(p *Pod) (*proxy, string, []string) {
			return in.sidecars[p.Key()], p.Netns, []string{"-A PREROUTING -p tcp -j ISTIO_INBOUND", "-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT",
				"-A OUTPUT -p tcp -j ISTIO_OUTPUT", "-A ISTIO_OUTPUT -j ISTIO_REDIRECT",
				fmt.Sprintf("-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports %d", portOutbound),
				fmt.Sprintf("-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports %d", portInbound)}
		})
	}}
}
