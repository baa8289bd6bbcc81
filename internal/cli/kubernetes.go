//go:build !labonly

package cli

import (
	"context"
	"log/slog"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/platform/kube"
	"github.com/meshbench/meshbench/internal/study"
)

const labOnly = false

const (
	labOnlyNote = ""
	labOnlyFix  = ""
)

func buildPlatforms() []string { return []string{infra.Lab, infra.Kubernetes} }

// openKubernetes opens the Kubernetes platform a study's platform section
// describes.
func openKubernetes(p study.Platform, log *slog.Logger) (platform.Platform, error) {
	o := kubeOptions(p.Kubernetes)
	o.Logger, o.Ingress, o.Meshes = log, p.Ingress, p.Meshes
	return kube.New(o)
}

// kubernetesFindings is the Kubernetes platform's preflight for a study.
func kubernetesFindings(ctx context.Context, p study.Platform) []platform.Finding {
	o := kubeOptions(p.Kubernetes)
	o.Ingress, o.Meshes = p.Ingress, p.Meshes
	return kube.Doctor(ctx, o, infra.ClusterSpec{Nodes: p.Nodes})
}

// kubeOptions maps a study's Kubernetes section onto the Kubernetes
// platform's options; a nil section gives kube's defaults (the kubeconfig
// from $KUBECONFIG or ~/.kube/config, as kubectl finds it).
func kubeOptions(k *study.Kubernetes) kube.Options {
	if k == nil {
		return kube.Options{}
	}
	return kube.Options{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Image: k.Image,
		ImagePullPolicy: k.ImagePullPolicy, Prometheus: k.Prometheus,
		Charts: k.Charts, Timeout: k.Timeout.D(), GatewayImage: k.GatewayImage,
	}
}
