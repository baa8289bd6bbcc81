package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// The API server lets a user create a ClusterRole or Role only if the
// user already holds every permission it grants, and bind a role only if
// the user holds its permissions or may bind it; the escalate and bind
// verbs lift those checks, and make a role as strong as cluster-admin. So
// the role a run needs holds what the charts' own roles grant, read here
// from the charts themselves, as the installer would install them.

// renderedRelease is one chart release rendered on the client.
type renderedRelease struct {
	Chart, Release, Namespace string
	Manifest                  string // its objects and hooks, as YAML documents
}

// chartRBAC renders every chart release the meshes of p.opts.Meshes
// install, with the values the installer gives them, on the client for
// Kubernetes kubeVersion (no cluster is read), and returns what creating
// their RBAC needs (rbacNeeds), and the charts it read as "key=chart
// version".
func (p *kubePlatform) chartRBAC(ctx context.Context, kubeVersion string) ([]rbacv1.PolicyRule, []string, error) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes version %q: %w", kubeVersion, err)
	}
	loaded := map[string]*chart.Chart{}
	rendered := map[string]string{} // by release and values
	var rules []rbacv1.PolicyRule
	var charts []string
	for _, m := range p.opts.Meshes {
		// The plan as InstallMesh makes it, but before Up matched nodes:
		// the placement values are empty, which the meshes' RBAC objects
		// do not depend on.
		pl, err := p.plan(m)
		if err != nil {
			return nil, nil, fmt.Errorf("mesh %s: %w", m.Profile, err)
		}
		var rels []renderedRelease
		for _, r := range pl.Releases {
			ch, ok := loaded[r.Chart]
			if !ok {
				if ch, err = p.loadChart(r.Chart); err != nil {
					return nil, nil, err
				}
				loaded[r.Chart] = ch
				charts = append(charts, r.Chart+"="+ch.Metadata.Name+" "+ch.Metadata.Version)
			}
			values := p.releaseValues(r)
			key, err := json.Marshal([]any{r.Chart, r.Name, r.Namespace, values})
			if err != nil {
				return nil, nil, fmt.Errorf("chart %s: values: %w", r.Chart, err)
			}
			out, ok := rendered[string(key)]
			if !ok {
				if out, err = renderRelease(ctx, ch, r, values, kv); err != nil {
					return nil, nil, fmt.Errorf("mesh %s: render chart %s (%s %s): %w", m.Profile, r.Chart, ch.Metadata.Name, ch.Metadata.Version, err)
				}
				rendered[string(key)] = out
			}
			rels = append(rels, renderedRelease{Chart: r.Chart, Release: r.Name, Namespace: r.Namespace, Manifest: out})
		}
		rs, err := rbacNeeds(rels, p.opts.AllowChartRules)
		if err != nil {
			return nil, nil, fmt.Errorf("mesh %s: %w", m.Profile, err)
		}
		rules = append(rules, rs...)
	}
	slices.Sort(charts)
	return rules, charts, nil
}

// renderRelease renders a release as `helm template` does: on the client,
// for Kubernetes kv, with the chart's hooks.
func renderRelease(ctx context.Context, ch *chart.Chart, r helmRelease, values map[string]any, kv *chartutil.KubeVersion) (string, error) {
	in := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	in.ReleaseName, in.Namespace = r.Name, r.Namespace
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.KubeVersion = kv
	rel, err := in.RunWithContext(ctx, ch, values)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		b.WriteString("\n---\n")
		b.WriteString(h.Manifest)
	}
	return b.String(), nil
}

// rbacObject is the part of an RBAC object (or a List of objects) that
// rbacNeeds reads.
type rbacObject struct {
	APIVersion      string                  `json:"apiVersion"`
	Kind            string                  `json:"kind"`
	Metadata        metav1.ObjectMeta       `json:"metadata"`
	Rules           []rbacv1.PolicyRule     `json:"rules"`
	AggregationRule *rbacv1.AggregationRule `json:"aggregationRule"`
	RoleRef         rbacv1.RoleRef          `json:"roleRef"`
	Items           []json.RawMessage       `json:"items"`
}

// rbacNeeds reads the RBAC objects of one mesh's releases, installed in
// order, and returns what their installer must hold:
//   - every rule of their ClusterRoles and Roles, cluster-wide: a Role
//     goes in a namespace the run creates, which does not exist before it
//     to bind a Role in;
//   - bind, restricted by resourceNames, on each role a binding names that
//     no release creates (a role the cluster has, such as a system
//     ClusterRole): holding its rules instead would mean reading them from
//     the cluster, and granting all of them to meshbench.
//
// A ClusterRole with an aggregationRule is an error: the API server lets
// only a user holding every permission there is (cluster-admin) create
// one. So is a role with a wide rule (wideRule) unless allow names it,
// as "ClusterRole/NAME" or "Role/NAMESPACE/NAME".
func rbacNeeds(rels []renderedRelease, allow []string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	created := map[string]bool{} // "ClusterRole/name", "Role/namespace/name"
	type ref struct{ kind, namespace, name string }
	var refs []ref
	var visit func(r renderedRelease, doc []byte) error
	visit = func(r renderedRelease, doc []byte) error {
		var o rbacObject
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return fmt.Errorf("chart %s (release %s): %w", r.Chart, r.Release, err)
		}
		if o.Kind == "List" || strings.HasSuffix(o.Kind, "List") {
			for _, item := range o.Items {
				if err := visit(r, item); err != nil {
					return err
				}
			}
			return nil
		}
		group, _, _ := strings.Cut(o.APIVersion, "/")
		if group != rbacv1.GroupName {
			return nil
		}
		ns := o.Metadata.Namespace
		if ns == "" {
			ns = r.Namespace // Helm puts a namespaced object without one in the release's
		}
		switch o.Kind {
		case "ClusterRole":
			if o.AggregationRule != nil && len(o.AggregationRule.ClusterRoleSelectors) > 0 {
				return fmt.Errorf("chart %s (release %s) creates ClusterRole %s with an aggregationRule, which only cluster-admin may create: "+
					"install that mesh yourself and set use_existing on it in the study, or run meshbench as cluster-admin", r.Chart, r.Release, o.Metadata.Name)
			}
			if err := refuseWide(r, "ClusterRole/"+o.Metadata.Name, o.Rules, allow); err != nil {
				return err
			}
			created["ClusterRole/"+o.Metadata.Name] = true
			rules = append(rules, o.Rules...)
		case "Role":
			if err := refuseWide(r, "Role/"+ns+"/"+o.Metadata.Name, o.Rules, allow); err != nil {
				return err
			}
			created["Role/"+ns+"/"+o.Metadata.Name] = true
			rules = append(rules, o.Rules...)
		case "ClusterRoleBinding":
			refs = append(refs, ref{kind: o.RoleRef.Kind, name: o.RoleRef.Name})
		case "RoleBinding":
			refs = append(refs, ref{kind: o.RoleRef.Kind, namespace: ns, name: o.RoleRef.Name})
		}
		return nil
	}
	for _, r := range rels {
		for _, doc := range splitYAML(r.Manifest) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			if err := visit(r, []byte(doc)); err != nil {
				return nil, err
			}
		}
	}
	for _, rf := range refs {
		switch {
		case rf.kind == "ClusterRole" && !created["ClusterRole/"+rf.name]:
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{rf.name}})
		case rf.kind == "Role" && !created["Role/"+rf.namespace+"/"+rf.name]:
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"bind"}, ResourceNames: []string{rf.name}})
		}
	}
	return rules, nil
}

// AllowChartRulesFlag is the flag that accepts a chart role's wide rules.
const AllowChartRulesFlag = "--allow-chart-rules"

// refuseWide refuses a chart role holding a wide rule, unless allow
// names the role: the role meshbench needs holds every rule of the
// charts' roles, so a wide one would be granted to meshbench too.
func refuseWide(r renderedRelease, role string, rules []rbacv1.PolicyRule, allow []string) error {
	if slices.Contains(allow, role) {
		return nil
	}
	for _, rule := range rules {
		if why := wideRule(rule); why != "" {
			return fmt.Errorf("chart %s (release %s): %s grants %s, more than a mesh's own components need, and meshbench would have to hold it too: "+
				"if you trust the chart with it, accept it by name with %s %s", r.Chart, r.Release, role, why, AllowChartRulesFlag, role)
		}
	}
	return nil
}

// readVerbs are the verbs that only read.
var readVerbs = []string{"get", "list", "watch"}

// wideRule says how a rule reaches beyond what a mesh's components need,
// or "": non-resource URLs; every API group; every resource of a group
// with a verb that writes, or of one of Kubernetes' own groups (which
// hold Secrets, RBAC and workloads) with any verb; or every verb on a
// resource other than a status subresource. What Istio's charts hold is
// not wide: reading every resource of Istio's and the Gateway API's
// groups, and every verb on ingresses/status.
func wideRule(rule rbacv1.PolicyRule) string {
	if len(rule.NonResourceURLs) > 0 {
		return "the non-resource URLs " + strings.Join(rule.NonResourceURLs, ", ")
	}
	if slices.Contains(rule.APIGroups, "*") {
		return "every API group"
	}
	for _, res := range rule.Resources {
		if res != "*" && !strings.HasPrefix(res, "*/") {
			continue
		}
		for _, v := range rule.Verbs {
			if !slices.Contains(readVerbs, v) {
				return fmt.Sprintf("%q on every resource of %s", v, groupsOf(rule))
			}
		}
		for _, g := range rule.APIGroups {
			if builtinGroup(g) {
				return "every resource of " + groupsOf(rbacv1.PolicyRule{APIGroups: []string{g}}) + ", one of Kubernetes' own groups"
			}
		}
	}
	if slices.Contains(rule.Verbs, "*") {
		for _, res := range rule.Resources {
			if !strings.HasSuffix(res, "/status") {
				return "every verb on " + res
			}
		}
	}
	return ""
}

// groupsOf names a rule's API groups for a message.
func groupsOf(rule rbacv1.PolicyRule) string {
	var gs []string
	for _, g := range rule.APIGroups {
		if g == "" {
			g = "the core group"
		}
		gs = append(gs, g)
	}
	return strings.Join(gs, ", ")
}

// builtinGroup says whether an API group is one of Kubernetes' own: the
// groups client-go's scheme registers.
func builtinGroup(group string) bool {
	for _, gv := range scheme.Scheme.PrioritizedVersionsAllGroups() {
		if gv.Group == group {
			return true
		}
	}
	return false
}
