package kube

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/versions"
)

func TestResolveCharts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		over    map[string]mesh.ChartSource
		key     string
		want    mesh.ChartSource
		wantErr string
	}{
		{name: "pinned", key: mesh.ChartIstiod, want: mesh.ChartSource{Chart: "istiod", Repo: istioRepo, Version: versions.Istio}},
		{name: "version only keeps the source", over: map[string]mesh.ChartSource{mesh.ChartIstiod: {Version: "1.24.2"}},
			key: mesh.ChartIstiod, want: mesh.ChartSource{Chart: "istiod", Repo: istioRepo, Version: "1.24.2"}},
		{name: "local chart drops the pinned version", over: map[string]mesh.ChartSource{mesh.ChartZtunnel: {Chart: "/charts/ztunnel"}},
			key: mesh.ChartZtunnel, want: mesh.ChartSource{Chart: "/charts/ztunnel"}},
		{name: "values ride along", over: map[string]mesh.ChartSource{mesh.ChartIstioGateway: {Values: map[string]any{"replicaCount": 2}}},
			key: mesh.ChartIstioGateway, want: mesh.ChartSource{Chart: "gateway", Repo: istioRepo, Version: versions.Istio, Values: map[string]any{"replicaCount": 2}}},
		{name: "cilium is not a chart meshbench installs", over: map[string]mesh.ChartSource{"cilium": {Version: "1.15.1"}}, wantErr: "charts.cilium: unknown chart"},
		{name: "unknown key", over: map[string]mesh.ChartSource{"istio-egress": {Version: "1"}}, wantErr: "charts.istio-egress: unknown chart"},
		{name: "repo without chart", over: map[string]mesh.ChartSource{mesh.ChartZtunnel: {Repo: "https://x"}}, wantErr: "without a chart name"},
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
	if got, want := strings.Join(chartKeys(DefaultCharts()), ","), strings.Join(mesh.ChartKeys(), ","); got != want {
		t.Errorf("pinned charts %s, registry's chart keys %s", got, want)
	}
}
