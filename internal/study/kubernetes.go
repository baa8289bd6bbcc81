package study

import (
	"maps"
	"slices"

	"github.com/meshbench/meshbench/internal/platform"
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
	// A chart source either names a chart or keeps the pinned one.
	known := platform.ChartKeys()
	for _, key := range slices.Sorted(maps.Keys(k.Charts)) {
		path := "platform.kubernetes.charts." + key
		if !slices.Contains(known, key) {
			return fieldError(path, "unknown chart; known: %s", joinNames(known))
		}
		if c := k.Charts[key]; c.Repo != "" && c.Chart == "" {
			return fieldError(path+".repo", "%q given without a chart name: set chart too", c.Repo)
		}
	}
	return nil
}
