package study

import (
	"maps"
	"slices"

	"github.com/meshbench/meshbench/internal/platform/kube"
)

// validate checks a Kubernetes section; a study on Kubernetes must have
// one, as it must name meshbench's image.
func (k *Kubernetes) validate() error {
	if k == nil || k.Image == "" {
		return fieldError("platform.kubernetes.image", "required on Kubernetes: the registry and tag of meshbench's image (or --image)")
	}
	if k.Timeout < 0 {
		return fieldError("platform.kubernetes.timeout", "must not be negative, got %s", k.Timeout)
	}
	// The keys are the pinned charts' (kube.DefaultCharts); a chart
	// source either names a chart or keeps the pinned one.
	pinned := kube.DefaultCharts()
	known := slices.Sorted(maps.Keys(pinned))
	for _, key := range slices.Sorted(maps.Keys(k.Charts)) {
		path := "platform.kubernetes.charts." + key
		if _, ok := pinned[key]; !ok {
			return fieldError(path, "unknown chart; known: %s", joinNames(known))
		}
		if c := k.Charts[key]; c.Repo != "" && c.Chart == "" {
			return fieldError(path+".repo", "%q given without a chart name: set chart too", c.Repo)
		}
	}
	return nil
}

// Options maps the section onto the Kubernetes platform's options; a nil
// section gives kube's defaults (the kubeconfig from $KUBECONFIG or
// ~/.kube/config, as kubectl finds it).
func (k *Kubernetes) Options() kube.Options {
	if k == nil {
		return kube.Options{}
	}
	return kube.Options{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Image: k.Image,
		ImagePullPolicy: k.ImagePullPolicy, Prometheus: k.Prometheus,
		Charts: k.Charts, Timeout: k.Timeout.D(), GatewayImage: k.GatewayImage,
	}
}
