package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// clientAs is a client of the test cluster acting as a kubeconfig
// context's user.
func clientAs(t *testing.T, c *testCluster, kubeContext string) kubernetes.Interface {
	t.Helper()
	k, err := kubernetes.NewForConfig(configAs(t, c, kubeContext))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestIntegrationForgedRelease has a tenant, who may write Secrets in its
// own namespace team-a and nothing else, forge a Helm release there with
// the labels of a meshbench run's: its manifest names a ConfigMap in
// kube-system and its pre-delete hook binds the ClusterRole meshbench to
// the tenant. meshbench recorded no such release, so neither a run, nor
// `kubernetes down` of that run or of every run, lists it, uninstalls it
// or touches what it names.
func TestIntegrationForgedRelease(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const (
		tenantNS = "team-a"
		victim   = "meshbench-it-victim"
		grant    = "meshbench-it-forged-grant"
		run      = "20260101-000000-f0f0f0"
	)
	nss := c.Client.CoreV1().Namespaces()
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := c.Client.CoreV1().ConfigMaps("kube-system")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: victim}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cms.Delete(ctx, victim, metav1.DeleteOptions{})
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(ctx, grant, metav1.DeleteOptions{})
		_ = nss.Delete(ctx, tenantNS, metav1.DeleteOptions{})
		_ = wait.PollUntilContextTimeout(ctx, pollInterval, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := nss.Get(ctx, tenantNS, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	// The tenant may write Secrets in team-a, as a team's own role allows.
	rb := c.Client.RbacV1()
	if _, err := rb.Roles(tenantNS).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: verbsManage}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.RoleBindings(tenantNS).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "secrets"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secrets"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: tenantUser}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The forgery, written with Helm's own storage driver as the tenant.
	hook := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ` + grant + `}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ` + rbacName + `}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ` + tenantUser + `}]
`
	forged := &helmrelease.Release{
		Name: "istiod", Namespace: tenantNS, Version: 1,
		Info:     &helmrelease.Info{Status: helmrelease.StatusDeployed},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "istiod", Version: "1.29.0", APIVersion: "v2"}},
		Manifest: "---\n# Source: istiod/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + victim + "\n  namespace: kube-system\n",
		Hooks: []*helmrelease.Hook{{Name: grant, Kind: "ClusterRoleBinding", Path: "istiod/templates/grant.yaml", Manifest: hook,
			Events: []helmrelease.HookEvent{helmrelease.HookPreDelete}}},
		Labels: map[string]string{labelManagedBy: managedBy, labelRun: run, labelOrder: "1"},
	}
	store := driver.NewSecrets(clientAs(t, c, tenantContext).CoreV1().Secrets(tenantNS))
	if err := store.Create("sh.helm.release.v1.istiod.v1", forged); err != nil {
		t.Fatalf("the tenant writing its forged release: %v", err)
	}
	untouched := func(when string) {
		t.Helper()
		if cm, err := cms.Get(ctx, victim, metav1.GetOptions{}); err != nil || cm.DeletionTimestamp != nil {
			t.Errorf("%s: kube-system/%s, named by the forged manifest: %v", when, victim, err)
		}
		if _, err := rb.ClusterRoleBindings().Get(ctx, grant, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the forged pre-delete hook's ClusterRoleBinding %s: %v, want none", when, grant, err)
		}
		if _, err := store.Get("sh.helm.release.v1.istiod.v1"); err != nil {
			t.Errorf("%s: the forged release: %v, want it left where the tenant put it", when, err)
		}
	}

	for _, r := range []string{run, ""} {
		items, err := Inventory(ctx, Options{Kubeconfig: c.Kubeconfig, Context: runnerContext}, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if strings.Contains(it.What, tenantNS) {
				t.Errorf("kubernetes down %q lists the forgery: %s (run %s)", r, it.What, it.Run)
			}
		}
	}
	// A run is not refused for it, which would tell the operator to run
	// down on it.
	p := newTestPlatform(t, c)
	if err := p.Up(ctx, testClusterSpec); err != nil {
		t.Errorf("a run's Up beside the forgery: %v", err)
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	untouched("after a run")
	for _, r := range []string{run, ""} {
		if err := Teardown(ctx, Options{Kubeconfig: c.Kubeconfig, Context: runnerContext}, r); err != nil {
			t.Errorf("kubernetes down %q: %v", r, err)
		}
		untouched("after kubernetes down " + r)
	}
}
