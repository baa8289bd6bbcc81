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
	"k8s.io/client-go/kubernetes"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// runnerUser is the test user bound to the role `meshbench kubernetes
// rbac` prints, and to nothing else; runnerContext is its kubeconfig
// context, which every test platform uses.
const (
	runnerUser    = "meshbench-runner"
	runnerContext = "runner"
)

// bindRunner applies what WriteRBAC prints for the runner user, as a user
// would with kubectl apply, once for the test cluster's life.
func bindRunner(ctx context.Context, client kubernetes.Interface) error {
	var b bytes.Buffer
	if err := WriteRBAC(&b, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: runnerUser}); err != nil {
		return err
	}
	docs := strings.Split(b.String(), "---\n")
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.Unmarshal([]byte(docs[0]), &role); err != nil {
		return err
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &binding); err != nil {
		return err
	}
	rb := client.RbacV1()
	if _, err := rb.ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := rb.ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{})
	return err
}

// TestIntegrationLeastPrivilege runs a run's whole flow (doctor, Up,
// Deploy, a mesh from its charts, its removal, Down) as a user bound only
// to the role `meshbench kubernetes rbac` prints, as every test platform
// is: a verb the platform uses and the role lacks fails here, and in
// whichever other test uses it.
func TestIntegrationLeastPrivilege(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p := newTestPlatform(t, c)
	if p.opts.Context != runnerContext {
		t.Fatalf("the test platform acts as context %q, want the runner's", p.opts.Context)
	}
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
