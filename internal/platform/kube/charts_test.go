package kube

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/platform"
)

func TestResolveCharts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		over    map[string]platform.ChartSource
		key     string
		want    platform.ChartSource
		wantErr string
	}{
		{name: "pinned", key: platform.ChartIstiod, want: platform.ChartSource{Chart: "istiod", Repo: istioRepo, Version: "1.22.0"}},
		{name: "version only keeps the source", over: map[string]platform.ChartSource{platform.ChartIstiod: {Version: "1.24.2"}},
			key: platform.ChartIstiod, want: platform.ChartSource{Chart: "istiod", Repo: istioRepo, Version: "1.24.2"}},
		{name: "local chart drops the pinned version", over: map[string]platform.ChartSource{platform.ChartZtunnel: {Chart: "/charts/ztunnel"}},
			key: platform.ChartZtunnel, want: platform.ChartSource{Chart: "/charts/ztunnel"}},
		{name: "values ride along", over: map[string]platform.ChartSource{platform.ChartCilium: {Values: map[string]any{"k8sServiceHost": "10.0.0.1"}}},
			key: platform.ChartCilium, want: platform.ChartSource{Chart: "cilium", Repo: "https://helm.cilium.io/", Version: "1.15.1", Values: map[string]any{"k8sServiceHost": "10.0.0.1"}}},
		{name: "unknown key", over: map[string]platform.ChartSource{"istio-gateway": {Version: "1"}}, wantErr: "charts.istio-gateway: unknown chart"},
		{name: "repo without chart", over: map[string]platform.ChartSource{platform.ChartCilium: {Repo: "https://x"}}, wantErr: "without a chart name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := resolveCharts(tc.over)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[tc.key], tc.want) {
				t.Errorf("%s = %+v, want %+v", tc.key, got[tc.key], tc.want)
			}
		})
	}
}

func TestMergeValues(t *testing.T) {
	t.Parallel()
	base := map[string]any{"a": map[string]any{"b": 1, "c": 2}, "d": 3}
	over := map[string]any{"a": map[string]any{"c": 20, "e": 5}, "d": map[string]any{"x": 1}}
	got := mergeValues(base, over)
	want := map[string]any{"a": map[string]any{"b": 1, "c": 20, "e": 5}, "d": map[string]any{"x": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mergeValues = %v, want %v", got, want)
	}
}

func TestDefaultChartsCoverTheRegistry(t *testing.T) {
	t.Parallel()
	if got, want := strings.Join(chartKeys(DefaultCharts()), ","), strings.Join(platform.ChartKeys(), ","); got != want {
		t.Errorf("pinned charts %s, registry's chart keys %s", got, want)
	}
}
