package kube

import (
	"fmt"
	"sort"
	"strings"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/versions"
)

const istioRepo = versions.IstioRepo

// DefaultCharts are the pinned charts, as package versions pins them.
// Cilium has none: it is the
// cluster's network plugin, which meshbench never installs. Linkerd's come
// from the user's Helm repositories, added as "linkerd" with
// `helm repo add linkerd https://helm.linkerd.io/stable`.
func DefaultCharts() map[string]mesh.ChartSource {
	return map[string]mesh.ChartSource{
		mesh.ChartIstioBase:      {Chart: "base", Repo: istioRepo, Version: versions.Istio},
		mesh.ChartIstiod:         {Chart: "istiod", Repo: istioRepo, Version: versions.Istio},
		mesh.ChartIstioCNI:       {Chart: "cni", Repo: istioRepo, Version: versions.Istio},
		mesh.ChartZtunnel:        {Chart: "ztunnel", Repo: istioRepo, Version: versions.Istio},
		mesh.ChartIstioGateway:   {Chart: "gateway", Repo: istioRepo, Version: versions.Istio},
		mesh.ChartLinkerdCRDs:    {Chart: "linkerd/linkerd-crds", Version: versions.LinkerdCRDsChart},
		mesh.ChartLinkerdControl: {Chart: "linkerd/linkerd-control-plane", Version: versions.LinkerdControlChart},
	}
}

// resolveCharts applies a study's overrides to the pinned charts. An
// override naming a chart or repository replaces the source whole; one
// giving only a version or values keeps the pinned source.
func resolveCharts(overrides map[string]mesh.ChartSource) (map[string]mesh.ChartSource, error) {
	charts := DefaultCharts()
	for key, o := range overrides {
		c, ok := charts[key]
		if !ok {
			return nil, fmt.Errorf("charts.%s: unknown chart; known: %s", key, strings.Join(chartKeys(charts), ", "))
		}
		if o.Chart != "" || o.Repo != "" {
			if o.Chart == "" {
				return nil, fmt.Errorf("charts.%s: repo %q given without a chart name", key, o.Repo)
			}
			c = mesh.ChartSource{Chart: o.Chart, Repo: o.Repo}
		}
		if o.Version != "" || o.Chart != "" {
			c.Version = o.Version
		}
		c.Values = o.Values
		charts[key] = c
	}
	return charts, nil
}

func chartKeys(m map[string]mesh.ChartSource) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeValues deep-merges over into base, over winning, and returns base.
func mergeValues(base, over map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = mergeValues(bm, om)
				continue
			}
		}
		base[k] = v
	}
	return base
}
