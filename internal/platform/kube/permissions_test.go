package kube

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func TestWriteRBAC(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "perf"}
	if err := WriteRBAC(&b, subject); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a ClusterRole and its binding:\n%s", len(docs), b.String())
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &binding); err != nil {
		t.Fatal(err)
	}
	if role.Kind != "ClusterRole" || !reflect.DeepEqual(role.Rules, Rules) {
		t.Errorf("ClusterRole %s with rules %v, want Rules", role.Kind, role.Rules)
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0] != subject {
		t.Errorf("binding of %s to %v, want %s to %v", binding.RoleRef.Name, binding.Subjects, role.Name, subject)
	}
}

// TestNeededCoversCleanUp: what clean-up does, which doctor once missed,
// is among the actions doctor asks about.
func TestNeededCoversCleanUp(t *testing.T) {
	t.Parallel()
	asked := map[string]bool{}
	for _, ra := range needed() {
		asked[what(ra)] = true
	}
	for _, w := range []string{
		"list secrets", "delete customresourcedefinitions.apiextensions.k8s.io", "patch deployments.apps", "delete jobs.batch",
		"delete validatingwebhookconfigurations.admissionregistration.k8s.io", "list pods.metrics.k8s.io", "get pods/log",
		"update leases.coordination.k8s.io", "escalate clusterroles.rbac.authorization.k8s.io",
	} {
		if !asked[w] {
			t.Errorf("doctor does not ask for %q", w)
		}
	}
}
