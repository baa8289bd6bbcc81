package kube

import (
	"io"

	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Verb sets the rules below grant.
var (
	verbsRead   = []string{"get", "list", "watch"}
	verbsManage = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// rbacName names the ClusterRole and its binding.
const rbacName = "meshbench"

// Rules are every permission a run uses, the one list that `meshbench
// kubernetes rbac` grants and `meshbench doctor` checks: meshbench's own
// objects (namespaces, the workload, Jobs, pod logs, the Lease), the
// mesh proxies' metrics through the pod proxy, Helm's
// release Secrets, and what the meshes' charts install and Helm must
// create, read and remove (CRDs, webhooks, RBAC, DaemonSets, PDBs, HPAs,
// and the meshes' own resources). Installing a chart's ClusterRoles
// needs escalate and bind, which make this role as strong as
// cluster-admin in effect: it narrows what a mistake can touch, not what
// a compromised meshbench could do.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces", "services", "serviceaccounts", "configmaps", "secrets"}, Verbs: verbsManage},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: verbsRead},
	{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	// The proxies' metrics, read for peer-identity evidence.
	{APIGroups: []string{""}, Resources: []string{"pods/proxy"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: verbsRead},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "daemonsets", "statefulsets"}, Verbs: verbsManage},
	{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: verbsRead},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: verbsManage},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: verbsManage},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: verbsManage},
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: verbsManage},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"},
		Verbs: append([]string{"bind", "escalate"}, verbsManage...)},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: verbsManage},
	{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: verbsManage},
	{APIGroups: []string{"security.istio.io", "networking.istio.io", "telemetry.istio.io", "extensions.istio.io",
		"gateway.networking.k8s.io", "policy.linkerd.io", "linkerd.io", "cilium.io"}, Resources: []string{"*"}, Verbs: verbsManage},
	{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}},
}

// needed are the Rules as SelfSubjectAccessReviews ask them, one per
// verb and resource, cluster-wide.
func needed() []authv1.ResourceAttributes {
	var out []authv1.ResourceAttributes
	for _, r := range Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				resource, sub, _ := cutSlash(res)
				for _, v := range r.Verbs {
					out = append(out, authv1.ResourceAttributes{Verb: v, Group: g, Resource: resource, Subresource: sub})
				}
			}
		}
	}
	return out
}

func cutSlash(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// WriteRBAC writes the ClusterRole holding Rules and a ClusterRoleBinding
// of it to user (or, with a namespace, to that namespace's service
// account user), as YAML for kubectl apply.
func WriteRBAC(w io.Writer, subject rbacv1.Subject) error {
	role := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: rbacName, Labels: map[string]string{labelManagedBy: managedBy}},
		Rules:      Rules,
	}
	binding := rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: rbacName, Labels: map[string]string{labelManagedBy: managedBy}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: rbacName},
		Subjects:   []rbacv1.Subject{subject},
	}
	for i, o := range []any{role, binding} {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// what names an access review for a message: "delete customresourcedefinitions.apiextensions.k8s.io".
func what(ra authv1.ResourceAttributes) string {
	s := ra.Verb + " " + ra.Resource
	if ra.Subresource != "" {
		s += "/" + ra.Subresource
	}
	if ra.Group != "" {
		s += "." + ra.Group
	}
	return s
}
