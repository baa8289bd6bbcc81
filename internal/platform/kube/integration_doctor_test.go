package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
)

// TestIntegrationDoctor runs the preflight against the test cluster: a
// study the cluster can run passes every check; each way a study cannot
// run fails its own check with a fix; and the doctor creates nothing.
func TestIntegrationDoctor(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := snapshot(t, ctx, c.Kubeconfig)
	good := Options{
		Kubeconfig: c.Kubeconfig, Context: runnerContext, Image: "meshbench.test/meshbench:it", Prometheus: emptyPrometheus(t), Ingress: true,
		Meshes: []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}, {Profile: mesh.ProfileAmbient}},
		Charts: map[string]mesh.ChartSource{
			mesh.ChartIstioBase:    {Chart: c.Charts + "/base"},
			mesh.ChartIstiod:       {Chart: c.Charts + "/istio-control/istio-discovery"},
			mesh.ChartIstioCNI:     {Chart: c.Charts + "/istio-cni"},
			mesh.ChartZtunnel:      {Chart: c.Charts + "/ztunnel"},
			mesh.ChartIstioGateway: {Chart: c.Charts + "/gateway"},
		},
		HelmRepositoryConfig: filepath.Join(t.TempDir(), "repositories.yaml"),
	}
	tests := []struct {
		name    string
		set     func(o *Options)
		cluster infra.ClusterSpec
		failing map[string]string // check -> what its detail or fix must say
	}{
		{name: "a study the cluster can run", set: func(*Options) {}, cluster: testClusterSpec},
		{name: "an unknown context", set: func(o *Options) { o.Context = "elsewhere" }, cluster: testClusterSpec,
			failing: map[string]string{"kubeconfig": "--context"}},
		{name: "a user without rights", set: func(o *Options) { o.Context = "nobody" }, cluster: testClusterSpec,
			failing: map[string]string{"permissions": "meshbench kubernetes rbac", "nodes": "list nodes"}},
		{name: "a role no node has", set: func(*Options) {},
			cluster: infra.ClusterSpec{Nodes: []infra.NodeSpec{{Role: infra.NodeApp}, {Role: infra.NodeLoad}, {Role: infra.NodeIngress}}},
			failing: map[string]string{"nodes": "role ingress"}},
		{name: "no metrics source", set: func(o *Options) { o.Prometheus = "" }, cluster: testClusterSpec,
			failing: map[string]string{"metrics": "metrics-server"}},
		{name: "waypoints, Cilium and Linkerd from nowhere", cluster: testClusterSpec, set: func(o *Options) {
			o.Meshes = []mesh.MeshSpec{{Profile: mesh.ProfileAmbientWaypoint}, {Profile: mesh.ProfileCilium}, {Profile: mesh.ProfileLinkerd}}
		}, failing: map[string]string{"gateway-api": "gateway-api/releases", "meshes": "does not run Cilium",
			"chart linkerd-crds": "helm repo add linkerd", "chart linkerd-control-plane": "helm repo add linkerd",
			// The RBAC of Linkerd's charts cannot be read without them.
			"permissions": "helm repo add linkerd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			o.Charts = map[string]mesh.ChartSource{}
			for k, v := range good.Charts {
				o.Charts[k] = v
			}
			tc.set(&o)
			fs := Doctor(ctx, o, tc.cluster)
			seen := map[string]bool{}
			for _, f := range fs {
				seen[f.Check] = true
				want, bad := tc.failing[f.Check]
				switch {
				case bad && f.OK:
					t.Errorf("%s passed (%s), want it to fail", f.Check, f.Detail)
				case bad && !strings.Contains(f.Detail+" "+f.Fix, want):
					t.Errorf("%s: %q / fix %q does not say %q", f.Check, f.Detail, f.Fix, want)
				case !bad && !f.OK:
					t.Errorf("%s failed: %s (fix: %s)", f.Check, f.Detail, f.Fix)
				case !f.OK && f.Fix == "":
					t.Errorf("%s failed without a fix", f.Check)
				}
			}
			for check := range tc.failing {
				if !seen[check] {
					t.Errorf("no finding %s in %+v", check, fs)
				}
			}
			if len(tc.failing) == 0 {
				for _, want := range []string{"kubeconfig", "api-server", "permissions", "nodes", "metrics", "meshes", "chart istio-gateway"} {
					if !seen[want] {
						t.Errorf("no finding %s", want)
					}
				}
			}
		})
	}
	if extra := diffSnapshots(before, snapshot(t, ctx, c.Kubeconfig)); len(extra) > 0 {
		t.Errorf("the doctor created %d objects: %s", len(extra), strings.Join(firstN(extra, 20), ", "))
	}
}
