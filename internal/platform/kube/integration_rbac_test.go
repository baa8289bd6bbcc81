package kube

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/component-helpers/auth/rbac/validation"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/testenv"
)

// runnerUser is the test user bound to the role `meshbench kubernetes
// rbac` prints, and to nothing else; runnerContext is its kubeconfig
// context, which every test platform uses.
const (
	runnerUser    = "meshbench-runner"
	runnerContext = "runner"
	// smallUser (context smallContext) is bound by a test to the role
	// printed for a study that installs no charts; tenantUser (context
	// tenantContext) is another team's, with no rights but what a test
	// grants it.
	smallUser     = "meshbench-small"
	smallContext  = "small"
	tenantUser    = "team-a-tenant"
	tenantContext = "tenant"
)

// bindRunner applies what `meshbench kubernetes rbac` prints for the
// runner user with no study named (every mesh with charts, and the
// ingress gateway), for the charts the suite installs, as a user would
// with kubectl apply, once for the test cluster's life.
func bindRunner(ctx context.Context, c *testCluster) error {
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	charts, err := runnerCharts(c)
	if err != nil {
		return err
	}
	role, err := RBAC(ctx, Options{Charts: charts, Meshes: ChartMeshes(), Ingress: true}, v.GitVersion)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := WriteRBAC(&b, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: runnerUser}); err != nil {
		return err
	}
	docs := strings.Split(b.String(), "---\n")
	var cr rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.Unmarshal([]byte(docs[0]), &cr); err != nil {
		return err
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &binding); err != nil {
		return err
	}
	rb := c.Client.RbacV1()
	if _, err := rb.ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err = rb.ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{})
	return err
}

// runnerCharts are the charts the suite installs: Istio's from the module
// cache, and the Linkerd-shaped test charts.
func runnerCharts(c *testCluster) (map[string]mesh.ChartSource, error) {
	dir, err := filepath.Abs("testdata/linkerd-test-charts")
	if err != nil {
		return nil, err
	}
	charts := testCharts(c)
	charts[mesh.ChartLinkerdCRDs] = mesh.ChartSource{Chart: filepath.Join(dir, "linkerd-crds")}
	charts[mesh.ChartLinkerdControl] = mesh.ChartSource{Chart: filepath.Join(dir, "linkerd-control-plane")}
	return charts, nil
}

// TestIntegrationLeastPrivilege runs a run's whole flow (doctor for every
// mesh with charts, Up, Deploy, a mesh from its charts, its removal,
// Down) as a user bound only to the role `meshbench kubernetes rbac`
// prints, as every test platform is: a verb the platform uses and the
// role lacks fails here, and in whichever other test uses it (the Istio
// gateway chart's RBAC in TestIntegrationIngressCell). The role
// holds neither escalate nor bind: the API server refuses the runner a
// role, or a binding, granting more than it holds.
func TestIntegrationLeastPrivilege(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	charts, err := runnerCharts(c)
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPlatformWith(t, c, func(o *Options) { o.Charts, o.Meshes = charts, ChartMeshes() })
	if p.opts.Context != runnerContext {
		t.Fatalf("the test platform acts as context %q, want the runner's", p.opts.Context)
	}
	for _, f := range p.permissionFindings(ctx, DefaultKubeVersion) {
		if !f.OK {
			t.Fatalf("doctor's permissions as the runner: %s", f.Detail)
		}
	}
	// What escalate or bind would allow, the API server refuses.
	rb := p.c.kube.RbacV1()
	all := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-everything"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := rb.ClusterRoles().Create(ctx, all, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the runner creating a ClusterRole granting everything: %v, want forbidden", err)
	}
	admin := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: runnerUser}}}
	if _, err := rb.ClusterRoleBindings().Create(ctx, admin, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the runner binding itself to cluster-admin: %v, want forbidden", err)
	}
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Fatal(err)
	}
	if err := p.Deploy(ctx, platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 2}); err != nil {
		t.Fatal(err)
	}
	// Ambient's checks fail on kwok; the install itself must not.
	if _, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: mesh.ProfileAmbient}); err != nil && !strings.Contains(err.Error(), "is not in force") {
		t.Fatalf("InstallMesh as the runner: %v", err)
	}
	if err := p.RemoveMesh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationChartRBAC reads the RBAC of Istio's charts from the
// module cache, rendered with the installer's values for every Istio
// profile and the ingress gateway: the role holds what istiod's roles
// grant (TokenReviews, for one), what only ambient's istio-cni values
// render, and every other rule of the charts' roles, as the API server's
// own comparison says; and it holds neither escalate nor bind.
func TestIntegrationChartRBAC(t *testing.T) {
	testenv.Integration(t)
	dir, err := istioCharts()
	testenv.Need(t, err == nil, "Istio's charts from the module cache (scripts/k8s-testbin.sh fetches them): %v", err)
	var meshes []mesh.MeshSpec
	for _, m := range ChartMeshes() {
		if pr := mustProfile(t, m.Profile); pr.Mesh == mesh.Istio {
			meshes = append(meshes, m)
		}
	}
	o := Options{Charts: testCharts(&testCluster{Charts: dir}), Meshes: meshes, Ingress: true}
	role, err := RBAC(context.Background(), o, DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(role.Charts) != 5 {
		t.Errorf("charts read %v, want Istio's five", role.Charts)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"*"}},
		// istio-cni's ambient role, rendered only with ambient's values.
		{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch", "update"}},
	}
	if ok, missing := validation.Covers(role.Rules, want); !ok {
		t.Errorf("the role lacks %v", missing)
	}
	// Every rule of every role the charts render, by rendering them here
	// for each profile again.
	p := &kubePlatform{opts: o, charts: mustResolve(t, o.Charts)}
	kv, _ := chartutil.ParseKubeVersion(DefaultKubeVersion)
	roles := 0
	for _, m := range meshes {
		pl, err := p.plan(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pl.Releases {
			ch, err := p.loadChart(r.Chart)
			if err != nil {
				t.Fatal(err)
			}
			out, err := renderRelease(context.Background(), ch, r, p.releaseValues(r), kv)
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range splitYAML(out) {
				var obj rbacObject
				if err := sigsyaml.Unmarshal([]byte(doc), &obj); err != nil {
					t.Fatal(err)
				}
				if obj.Kind != "ClusterRole" && obj.Kind != "Role" {
					continue
				}
				roles++
				if ok, missing := validation.Covers(role.Rules, obj.Rules); !ok {
					t.Errorf("%s %s of chart %s (%s): the role lacks %v", obj.Kind, obj.Metadata.Name, r.Chart, m.Profile, missing)
				}
			}
		}
	}
	if roles < 5 {
		t.Errorf("%d roles rendered, want istiod's, istio-reader's, istio-cni's and the gateway's at least", roles)
	}
	assertNoEscalation(t, role.Rules)
}

func mustResolve(t *testing.T, over map[string]mesh.ChartSource) map[string]mesh.ChartSource {
	t.Helper()
	charts, err := resolveCharts(over)
	if err != nil {
		t.Fatal(err)
	}
	return charts
}
