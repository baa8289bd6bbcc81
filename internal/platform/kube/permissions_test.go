package kube

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/mesh"
)

func TestWriteRBAC(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "perf"}
	role := Role{Rules: mergeRules(ownRules), Charts: []string{"istiod=istiod 1.29.0"}}
	if err := WriteRBAC(&b, role, subject); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a ClusterRole and its binding:\n%s", len(docs), b.String())
	}
	var cr rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &cr); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &binding); err != nil {
		t.Fatal(err)
	}
	if cr.Kind != "ClusterRole" || !reflect.DeepEqual(cr.Rules, role.Rules) || cr.Annotations[annotCharts] != "istiod=istiod 1.29.0" {
		t.Errorf("ClusterRole %s with rules %v, annotations %v, want the role's", cr.Kind, cr.Rules, cr.Annotations)
	}
	if binding.RoleRef.Name != cr.Name || len(binding.Subjects) != 1 || binding.Subjects[0] != subject {
		t.Errorf("binding of %s to %v, want %s to %v", binding.RoleRef.Name, binding.Subjects, cr.Name, subject)
	}
	// A role that installs charts is cluster-admin in effect, and says so
	// before anyone applies it.
	if !strings.Contains(docs[0], "cluster-admin in effect") {
		t.Errorf("the role for installing meshes does not say it is cluster-admin in effect:\n%s", docs[0])
	}
}

// TestNeededCoversCleanUp: what clean-up does, which doctor once missed,
// is among the actions doctor asks about, and neither escalate nor bind
// is.
func TestNeededCoversCleanUp(t *testing.T) {
	t.Parallel()
	asked := map[string]bool{}
	for _, s := range needed(mergeRules(ownRules)) {
		asked[what(s)] = true
	}
	for _, w := range []string{
		"list secrets", "delete customresourcedefinitions.apiextensions.k8s.io", "patch deployments.apps", "delete jobs.batch",
		"delete validatingwebhookconfigurations.admissionregistration.k8s.io", "list pods.metrics.k8s.io", "get pods/log",
		"update leases.coordination.k8s.io", "create clusterroles.rbac.authorization.k8s.io",
	} {
		if !asked[w] {
			t.Errorf("doctor does not ask for %q", w)
		}
	}
	for w := range asked {
		if strings.HasPrefix(w, "escalate ") || strings.HasPrefix(w, "bind ") {
			t.Errorf("doctor asks for %q", w)
		}
	}
	assertNoEscalation(t, ownRules)
}

// assertNoEscalation fails unless rules withhold escalate on every role,
// and bind on any role they do not name.
func assertNoEscalation(t *testing.T, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, res := range []string{"clusterroles", "roles"} {
		for _, verb := range []string{"escalate", "bind"} {
			if ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{res}, Verbs: []string{verb}}}); ok {
				t.Errorf("the rules grant %s on any of %s", verb, res)
			}
		}
	}
}

func TestMergeRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []rbacv1.PolicyRule
		want []rbacv1.PolicyRule
	}{
		{
			name: "duplicates once, verbs of a resource together, resources with the same verbs together",
			in: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
				{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"list", "get"}},
			},
			want: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list"}}},
		},
		{
			name: "what a wildcard covers goes",
			in: []rbacv1.PolicyRule{
				{APIGroups: []string{"networking.istio.io"}, Resources: []string{"*"}, Verbs: []string{"get"}},
				{APIGroups: []string{"networking.istio.io"}, Resources: []string{"gateways", "gateways/status"}, Verbs: []string{"get"}},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"*"}},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"update"}},
			},
			want: []rbacv1.PolicyRule{
				{APIGroups: []string{"networking.istio.io"}, Resources: []string{"*"}, Verbs: []string{"get"}},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"*"}},
			},
		},
		{
			name: "named resources apart, unless the resource is granted whole",
			in: []rbacv1.PolicyRule{
				{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get"}, ResourceNames: []string{"istio-cni-node"}},
				{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get", "list"}},
				{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"system:auth-delegator"}},
				{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"view"}},
			},
			want: []rbacv1.PolicyRule{
				{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get", "list"}},
				{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"system:auth-delegator", "view"}},
			},
		},
		{
			name: "groups with the same resources and verbs share a rule; URLs last",
			in: []rbacv1.PolicyRule{
				{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
				{APIGroups: []string{"security.istio.io", "networking.istio.io"}, Resources: []string{"*"}, Verbs: []string{"list"}},
			},
			want: []rbacv1.PolicyRule{
				{APIGroups: []string{"networking.istio.io", "security.istio.io"}, Resources: []string{"*"}, Verbs: []string{"list"}},
				{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := mergeRules(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("mergeRules =\n%v\nwant\n%v", got, tc.want)
			}
			if ok, missing := validation.Covers(got, tc.in); !ok {
				t.Errorf("merged rules lose %v", missing)
			}
			if ok, extra := validation.Covers(tc.in, got); !ok {
				t.Errorf("merged rules add %v", extra)
			}
		})
	}
	// meshbench's own rules survive merging whole and add nothing.
	merged := mergeRules(ownRules)
	if ok, missing := validation.Covers(merged, ownRules); !ok {
		t.Errorf("merging ownRules loses %v", missing)
	}
	if ok, extra := validation.Covers(ownRules, merged); !ok {
		t.Errorf("merging ownRules adds %v", extra)
	}
}

// TestRBACNeeds reads RBAC objects as charts render them: roles' rules
// cluster-wide, bindings of the charts' own roles free, bindings of the
// cluster's roles as bind on those names alone, Lists looked into, other
// kinds ignored, and a ClusterRole that aggregates refused by name.
func TestRBACNeeds(t *testing.T) {
	t.Parallel()
	const manifest = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: mesh-controller}
rules:
- {apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: mesh-controller}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: mesh-controller}
subjects: [{kind: ServiceAccount, name: mesh, namespace: mesh-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: mesh-auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{kind: ServiceAccount, name: mesh, namespace: mesh-system}]
---
apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: mesh-secrets}
  rules:
  - {apiGroups: [""], resources: ["secrets"], verbs: ["get"]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: mesh-secrets}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: mesh-secrets}
  subjects: [{kind: ServiceAccount, name: mesh}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leader-election, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{kind: ServiceAccount, name: mesh, namespace: mesh-system}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: mesh-controller}
`
	got, err := rbacNeeds([]renderedRelease{{Chart: "mesh", Release: "mesh", Namespace: "mesh-system", Manifest: manifest}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"system:auth-delegator"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"bind"}, ResourceNames: []string{"extension-apiserver-authentication-reader"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rbacNeeds =\n%v\nwant\n%v", got, want)
	}
	assertNoEscalation(t, got)

	// A role a binding names is the chart's own only in its namespace.
	other := strings.Replace(manifest, "metadata: {name: mesh-secrets}\n  roleRef", "metadata: {name: mesh-secrets, namespace: elsewhere}\n  roleRef", 1)
	got, err = rbacNeeds([]renderedRelease{{Chart: "mesh", Release: "mesh", Namespace: "mesh-system", Manifest: other}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := validation.Covers(got, []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"bind"}, ResourceNames: []string{"mesh-secrets"}}}); !ok {
		t.Errorf("a binding of a Role in another namespace than the chart's needs bind on it: %v", got)
	}

	aggregated := manifest + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: mesh-view}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {mesh/aggregate-to-view: "true"}}]
rules: []
`
	_, err = rbacNeeds([]renderedRelease{{Chart: "mesh-chart", Release: "mesh", Namespace: "mesh-system", Manifest: aggregated}}, nil)
	if err == nil || !strings.Contains(err.Error(), "chart mesh-chart") || !strings.Contains(err.Error(), "ClusterRole mesh-view") || !strings.Contains(err.Error(), "cluster-admin") {
		t.Errorf("err = %v, want the chart and its aggregating ClusterRole named", err)
	}
}

// TestRBACNeedsRefusesWideRules: a chart role granting wildcards beyond
// its mesh's own API, or non-resource URLs, is refused, naming the chart
// and the role; the wildcards Istio's pinned charts hold (reading every
// resource of Istio's and the Gateway API's groups, every verb on
// ingresses/status) are not wide.
func TestRBACNeedsRefusesWideRules(t *testing.T) {
	t.Parallel()
	role := func(name, rules string) renderedRelease {
		return renderedRelease{Chart: "mesh-chart", Release: "mesh", Namespace: "mesh-system", Manifest: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ` + name + `}
rules:
` + rules}
	}
	for _, tc := range []struct{ name, rules string }{
		{"everything", `- {apiGroups: ["*"], resources: ["*"], verbs: ["*"]}` + "\n"},
		{"urls", `- {nonResourceURLs: ["*"], verbs: ["get"]}` + "\n"},
		{"read-core", `- {apiGroups: [""], resources: ["*"], verbs: ["get", "list"]}` + "\n"},
		{"write-groups", `- {apiGroups: ["networking.istio.io"], resources: ["*"], verbs: ["create"]}` + "\n"},
		{"all-verbs", `- {apiGroups: [""], resources: ["secrets"], verbs: ["*"]}` + "\n"},
	} {
		_, err := rbacNeeds([]renderedRelease{role("wide-"+tc.name, tc.rules)}, []string{"ClusterRole/another"})
		if err == nil || !strings.Contains(err.Error(), "chart mesh-chart") || !strings.Contains(err.Error(), "ClusterRole/wide-"+tc.name) ||
			!strings.Contains(err.Error(), "--allow-chart-rules") {
			t.Errorf("%s: err = %v, want a refusal naming the chart, the role and the flag", tc.name, err)
		}
		// Named, it is accepted, and the role a run needs holds it.
		got, err := rbacNeeds([]renderedRelease{role("wide-"+tc.name, tc.rules)}, []string{"ClusterRole/wide-" + tc.name})
		if err != nil || len(got) != 1 {
			t.Errorf("%s, named: %v, %v; want its rule", tc.name, got, err)
		}
	}
	istio := role("istiod", `- {apiGroups: ["security.istio.io", "networking.istio.io"], resources: ["*"], verbs: ["get", "watch", "list"]}
- {apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: ["get", "watch", "list"]}
- {apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["*"]}
`)
	if _, err := rbacNeeds([]renderedRelease{istio}, nil); err != nil {
		t.Errorf("Istio's wildcards: %v, want them accepted", err)
	}
}

// TestNamespacedRole: a study that installs no charts gets the namespaced
// role: nothing cluster-wide that reads Secrets, writes workloads or
// webhooks, or binds any role but meshbench's namespace role by name;
// printed with the admission policy that bounds it.
func TestNamespacedRole(t *testing.T) {
	t.Parallel()
	for _, meshes := range [][]mesh.MeshSpec{
		{{Profile: mesh.ProfileBaseline}},
		{{Profile: mesh.ProfileSidecar, UseExisting: true}, {Profile: mesh.ProfileAmbient, UseExisting: true}},
		{{Profile: mesh.ProfileCilium}},
	} {
		role, err := RBAC(context.Background(), Options{Meshes: meshes}, DefaultKubeVersion)
		if err != nil {
			t.Fatal(err)
		}
		if !role.Namespaced {
			t.Fatalf("%v: the role is not namespaced", meshes)
		}
		assertNoEscalation(t, role.Rules)
		for _, r := range []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"update"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}},
			{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"}, Verbs: []string{"create"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
		} {
			if ok, _ := validation.Covers(role.Rules, []rbacv1.PolicyRule{r}); ok {
				t.Errorf("%v: the namespaced role grants %v cluster-wide", meshes, r)
			}
		}
		for ns, rules := range role.Reads {
			for _, r := range rules {
				for _, v := range r.Verbs {
					if !slices.Contains(readVerbs, v) {
						t.Errorf("%v: the role %s in %s in %s, want reads only", meshes, v, r.Resources, ns)
					}
				}
			}
		}
		var b bytes.Buffer
		if err := WriteRBAC(&b, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "perf"}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kind: ValidatingAdmissionPolicy\n", "kind: ValidatingAdmissionPolicyBinding\n", "name: " + namespaceRoleName + "\n",
			`request.userInfo.username == "perf"`} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%v: the printed role lacks %q", meshes, want)
			}
		}
	}
	// A study that installs a chart is not namespaced.
	p := &kubePlatform{opts: Options{Meshes: []mesh.MeshSpec{{Profile: mesh.ProfileBaseline}, {Profile: mesh.ProfileSidecar}}}}
	if !p.installsCharts() {
		t.Error("a study with sidecar from charts would get the namespaced role")
	}
}
