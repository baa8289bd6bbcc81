package kube

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
)

// Verb sets the rules below grant.
var (
	verbsRead   = []string{"get", "list", "watch"}
	verbsManage = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// rbacName names the ClusterRole and its binding.
const rbacName = "meshbench"

// DefaultKubeVersion is the Kubernetes version charts are rendered for,
// to read their RBAC, when no cluster says its own: the version of the
// API server meshbench's tests run against (scripts/k8s-testbin.sh).
const DefaultKubeVersion = "v1.34.4"

// ownRules are the permissions meshbench's own actions use: its objects
// (namespaces, the workload, Jobs, pod logs, the Lease), the mesh
// proxies' metrics through the pod proxy, Helm's release Secrets, and the
// objects the meshes' charts install, which Helm must create, read and
// remove (CRDs, webhooks, RBAC objects, DaemonSets, PDBs, HPAs, and the
// meshes' own resources). The rules inside the charts' RBAC objects are
// not here: the role a run needs (RBAC) adds them, read from the charts.
// Neither escalate nor bind is here: either would let the role grant
// itself anything.
var ownRules = []rbacv1.PolicyRule{
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
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"}, Verbs: verbsManage},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: verbsManage},
	{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: verbsManage},
	{APIGroups: []string{"security.istio.io", "networking.istio.io", "telemetry.istio.io", "extensions.istio.io",
		"gateway.networking.k8s.io", "policy.linkerd.io", "linkerd.io", "cilium.io"}, Resources: []string{"*"}, Verbs: verbsManage},
	{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}},
}

// ChartMeshes are every profile the Kubernetes platform installs from
// charts (Istio's and Linkerd's), the meshes whose role `meshbench
// kubernetes rbac` prints when no study is named, with the ingress
// gateway: a role under which any study can run.
func ChartMeshes() []mesh.MeshSpec {
	var out []mesh.MeshSpec
	for _, name := range mesh.ProfileNames(infra.Kubernetes) {
		if pr, err := lookupProfile(name); err == nil && len(pr.ChartsFor(true)) > 0 {
			out = append(out, mesh.MeshSpec{Profile: name})
		}
	}
	return out
}

// Role is what a run needs. A study that installs charts needs one
// ClusterRole, which is cluster-admin in effect (Rules); one that
// installs none needs the namespaced role (Namespaced).
type Role struct {
	// Rules are granted cluster-wide: meshbench's own rules and those the
	// charts' RBAC needs, merged; under the namespaced role, the few
	// rules it needs cluster-wide.
	Rules []rbacv1.PolicyRule
	// Charts are the charts whose RBAC Rules hold, "key=chart version".
	Charts []string
	// Namespaced is the namespaced role: NamespaceRules are what
	// meshbench binds itself to in each namespace it makes, and Reads
	// what it reads, by namespace, in namespaces the cluster has.
	Namespaced     bool
	NamespaceRules []rbacv1.PolicyRule
	Reads          map[string][]rbacv1.PolicyRule
}

// RBAC is the one role a run of opts.Meshes needs, which `meshbench
// kubernetes rbac` prints and `meshbench doctor` checks: meshbench's own
// rules, and what creating the RBAC objects of the charts those meshes
// install needs (every rule of the charts' roles, bind on the roles of
// the cluster they bind), read from the charts opts.Charts names,
// rendered with the installer's values on the client for Kubernetes
// kubeVersion. Reading a chart may reach its repository.
func RBAC(ctx context.Context, opts Options, kubeVersion string) (Role, error) {
	charts, err := resolveCharts(opts.Charts)
	if err != nil {
		return Role{}, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := &kubePlatform{opts: opts, log: opts.Logger, charts: charts}
	return p.role(ctx, kubeVersion)
}

// role is RBAC for the platform's meshes and charts.
func (p *kubePlatform) role(ctx context.Context, kubeVersion string) (Role, error) {
	if !p.installsCharts() {
		return p.namespacedRole()
	}
	rules, charts, err := p.chartRBAC(ctx, kubeVersion)
	if err != nil {
		return Role{}, err
	}
	return Role{Rules: mergeRules(append(slices.Clone(ownRules), rules...)), Charts: charts}, nil
}

// mergeRules returns rules granting exactly what rules grant, each
// permission once: split into single permissions, those another covers
// (as the API server's own comparison says) dropped, and the rest
// regrouped, sorted.
func mergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var atoms []rbacv1.PolicyRule
	seen := map[string]bool{}
	for _, r := range rules {
		for _, a := range validation.BreakdownRule(r) {
			k := strings.Join([]string{strings.Join(a.APIGroups, ","), strings.Join(a.Resources, ","), strings.Join(a.Verbs, ","),
				strings.Join(a.ResourceNames, ","), strings.Join(a.NonResourceURLs, ",")}, "|")
			if !seen[k] {
				seen[k] = true
				atoms = append(atoms, a)
			}
		}
	}
	type key struct{ group, resource, name, url string }
	verbs := map[key][]string{}
	for i, a := range atoms {
		covered := false
		for j, b := range atoms {
			if i != j {
				if covered, _ = validation.Covers([]rbacv1.PolicyRule{b}, []rbacv1.PolicyRule{a}); covered {
					break
				}
			}
		}
		if covered {
			continue
		}
		var k key
		if len(a.NonResourceURLs) > 0 {
			k.url = a.NonResourceURLs[0]
		} else {
			k.group, k.resource = a.APIGroups[0], a.Resources[0]
			if len(a.ResourceNames) > 0 {
				k.name = a.ResourceNames[0]
			}
		}
		verbs[k] = append(verbs[k], a.Verbs[0])
	}
	// Regroup: the permissions on one resource (or name, or URL) become
	// one set of verbs; resources of a group with the same verbs share a
	// rule, and groups with the same resources and verbs too.
	type byVerbs struct{ group, resource, verbs string }
	names := map[byVerbs][]string{}
	resources := map[byVerbs][]string{} // group and verbs -> resources
	urls := map[string][]string{}       // verbs -> URLs
	for k, vs := range verbs {
		slices.Sort(vs)
		v := strings.Join(vs, ",")
		switch {
		case k.url != "":
			urls[v] = append(urls[v], k.url)
		case k.name != "":
			names[byVerbs{k.group, k.resource, v}] = append(names[byVerbs{k.group, k.resource, v}], k.name)
		default:
			resources[byVerbs{group: k.group, verbs: v}] = append(resources[byVerbs{group: k.group, verbs: v}], k.resource)
		}
	}
	groups := map[byVerbs][]string{} // resources and verbs -> groups
	for k, rs := range resources {
		slices.Sort(rs)
		g := byVerbs{resource: strings.Join(rs, ","), verbs: k.verbs}
		groups[g] = append(groups[g], k.group)
	}
	var out []rbacv1.PolicyRule
	for k, gs := range groups {
		slices.Sort(gs)
		out = append(out, rbacv1.PolicyRule{APIGroups: gs, Resources: strings.Split(k.resource, ","), Verbs: strings.Split(k.verbs, ",")})
	}
	for k, ns := range names {
		slices.Sort(ns)
		out = append(out, rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: strings.Split(k.verbs, ","), ResourceNames: ns})
	}
	for v, us := range urls {
		slices.Sort(us)
		out = append(out, rbacv1.PolicyRule{NonResourceURLs: us, Verbs: strings.Split(v, ",")})
	}
	slices.SortFunc(out, func(a, b rbacv1.PolicyRule) int {
		return strings.Compare(ruleKey(a), ruleKey(b))
	})
	return out
}

// ruleKey orders rules: resource rules by group, resource and names, then
// non-resource URLs.
func ruleKey(r rbacv1.PolicyRule) string {
	if len(r.NonResourceURLs) > 0 {
		return "~" + strings.Join(r.NonResourceURLs, ",")
	}
	return strings.Join([]string{strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","), strings.Join(r.ResourceNames, ","), strings.Join(r.Verbs, ",")}, "|")
}

// needed are a role's rules as SelfSubjectAccessReviews ask them, one per
// verb and resource (and name) or URL, cluster-wide.
func needed(rules []rbacv1.PolicyRule) []authv1.SelfSubjectAccessReviewSpec {
	return neededIn(rules, "")
}

// neededIn is needed in one namespace ("" cluster-wide).
func neededIn(rules []rbacv1.PolicyRule, namespace string) []authv1.SelfSubjectAccessReviewSpec {
	var out []authv1.SelfSubjectAccessReviewSpec
	for _, r := range rules {
		for _, a := range validation.BreakdownRule(r) {
			if len(a.NonResourceURLs) > 0 {
				out = append(out, authv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authv1.NonResourceAttributes{Path: a.NonResourceURLs[0], Verb: a.Verbs[0]}})
				continue
			}
			resource, sub, _ := strings.Cut(a.Resources[0], "/")
			ra := &authv1.ResourceAttributes{Namespace: namespace, Verb: a.Verbs[0], Group: a.APIGroups[0], Resource: resource, Subresource: sub}
			if len(a.ResourceNames) > 0 {
				ra.Name = a.ResourceNames[0]
			}
			out = append(out, authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra})
		}
	}
	return out
}

// WriteRBAC writes what binds a role to subject, as YAML for kubectl
// apply, each part with a comment that says what it grants and why. A
// role that installs charts is one ClusterRole and its binding; the
// namespaced role is its ClusterRoles, the Roles it reads with, and the
// admission policy that bounds it.
func WriteRBAC(w io.Writer, role Role, subject rbacv1.Subject) error {
	if role.Namespaced {
		return writeNamespaced(w, role, subject)
	}
	cr := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: rbacName, Labels: map[string]string{labelManagedBy: managedBy}},
		Rules:      role.Rules,
	}
	if len(role.Charts) > 0 {
		cr.Annotations = map[string]string{annotCharts: strings.Join(role.Charts, ", ")}
	}
	return writeDocs(w, []doc{
		{installComment, cr},
		{"", clusterBinding(rbacName, subject)},
	})
}

// installComment says plainly what the role for installing meshes is.
const installComment = `# The role meshbench needs to install meshes from their charts. It is
# cluster-admin in effect: a mesh's charts create ClusterRoles and bindings,
# and the API server lets only a user who holds every permission a role
# grants create it, so this role holds all the charts' roles grant (every
# Secret, Pods and nodes everywhere, TokenReviews); it also creates
# mutating webhooks that see every pod, DaemonSets on every node, CRDs, and
# Helm's release Secrets in any namespace. It holds neither escalate nor
# unrestricted bind, but that bounds little. Bind it only to whom you would
# make cluster-admin. A study whose meshes the cluster runs already
# (use_existing), or that installs none (baseline, cilium), runs under a
# namespaced role instead: meshbench kubernetes rbac FILE prints it.`

// namespacedComment says what the namespaced role is.
const namespacedComment = `# The namespaced role, for a study that installs no charts (use_existing,
# baseline, cilium). Cluster-wide, meshbench may make namespaces, read
# nodes, CRDs, metrics and mesh policies, and bind ClusterRole
# ` + namespaceRoleName + ` (below). In each namespace it makes, it binds that role
# to itself; the admission policy ` + policyName + ` lets this user bind it
# nowhere else and to nobody else, change or delete only its own
# namespaces, and make no privileged pod, host path, Service with external
# IPs or ServiceAccount token. It needs admissionregistration.k8s.io/v1
# ValidatingAdmissionPolicy (Kubernetes 1.30 or later); without the policy
# the role could bind itself anywhere: apply all of this, or none.`

type doc struct {
	comment string
	obj     any
}

// writeDocs writes objects as YAML documents, each after its comment.
func writeDocs(w io.Writer, docs []doc) error {
	for i, d := range docs {
		b, err := yaml.Marshal(d.obj)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if d.comment != "" {
			if _, err := io.WriteString(w, d.comment+"\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func clusterBinding(name string, subject rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelManagedBy: managedBy}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}
}

// writeNamespaced writes the namespaced role for subject.
func writeNamespaced(w io.Writer, role Role, subject rbacv1.Subject) error {
	clusterRole := func(name string, rules []rbacv1.PolicyRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelManagedBy: managedBy}},
			Rules:      rules,
		}
	}
	vap, vapBinding := policy(subject)
	docs := []doc{
		{namespacedComment, clusterRole(namespacedRoleName, role.Rules)},
		{"", clusterBinding(namespacedRoleName, subject)},
		{"# Bound by meshbench itself, to itself, in each namespace it makes (not here).", clusterRole(namespaceRoleName, role.NamespaceRules)},
	}
	namespaces := slices.Sorted(maps.Keys(role.Reads))
	for i, ns := range namespaces {
		comment := ""
		if i == 0 {
			comment = "# What meshbench reads in namespaces the cluster has: read-only, by name where it can be."
		}
		meta := metav1.ObjectMeta{Name: readRoleName, Namespace: ns, Labels: map[string]string{labelManagedBy: managedBy}}
		docs = append(docs,
			doc{comment, rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta, Rules: role.Reads[ns]}},
			doc{"", rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: readRoleName}, Subjects: []rbacv1.Subject{subject}}})
	}
	docs = append(docs, doc{"", vap}, doc{"", vapBinding})
	return writeDocs(w, docs)
}

// annotCharts on the printed ClusterRole names the charts whose RBAC it
// holds: another chart version needs the role printed again.
const annotCharts = "meshbench.io/charts"

// what names an access review for a message: "delete customresourcedefinitions.apiextensions.k8s.io",
// "bind clusterroles.rbac.authorization.k8s.io system:auth-delegator", "get /metrics".
func what(s authv1.SelfSubjectAccessReviewSpec) string {
	if n := s.NonResourceAttributes; n != nil {
		return n.Verb + " " + n.Path
	}
	ra := s.ResourceAttributes
	out := ra.Verb + " " + ra.Resource
	if ra.Subresource != "" {
		out += "/" + ra.Subresource
	}
	if ra.Group != "" {
		out += "." + ra.Group
	}
	if ra.Name != "" {
		out += " " + ra.Name
	}
	return out
}
