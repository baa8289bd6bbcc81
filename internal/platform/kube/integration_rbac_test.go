package kube

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// runnerUser is the test user bound to the role `meshbench kubernetes
// rbac` prints, and to nothing else.
const runnerUser = "meshbench-runner"

// bindRunner applies what WriteRBAC prints for the runner user, as a user
// would with kubectl apply, and removes it when the test ends.
func bindRunner(t *testing.T, ctx context.Context, c *testCluster) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteRBAC(&b, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: runnerUser}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "---\n")
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.Unmarshal([]byte(docs[0]), &role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &binding); err != nil {
		t.Fatal(err)
	}
	rb := c.Client.RbacV1()
	if _, err := rb.ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rb.ClusterRoleBindings().Delete(context.Background(), rbacName, metav1.DeleteOptions{})
		_ = rb.ClusterRoles().Delete(context.Background(), rbacName, metav1.DeleteOptions{})
	})
}

// TestIntegrationLeastPrivilege runs a run's whole flow (doctor, Up,
// Deploy, a mesh from its charts, its removal, Down) as a user bound only
// to the role `meshbench kubernetes rbac` prints: a verb the platform uses
// and the role lacks fails here.
func TestIntegrationLeastPrivilege(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bindRunner(t, ctx, c)
	p := newTestPlatformWith(t, c, func(o *Options) { o.Context = "runner" })
	for _, f := range p.permissionFindings(ctx) {
		if !f.OK {
			t.Fatalf("doctor's permissions as the runner: %s", f.Detail)
		}
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
