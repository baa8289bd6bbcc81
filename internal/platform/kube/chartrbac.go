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
		rs, err := rbacNeeds(rels)
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
// one.
func rbacNeeds(rels []renderedRelease) ([]rbacv1.PolicyRule, error) {
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
			created["ClusterRole/"+o.Metadata.Name] = true
			rules = append(rules, o.Rules...)
		case "Role":
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
