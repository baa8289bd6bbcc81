package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/mesh"
)

// A study that installs no charts (baseline, Cilium, and meshes the
// cluster runs already, use_existing) runs under a namespaced role: what
// meshbench may do cluster-wide is small (make namespaces, read nodes,
// CRDs, metrics and its mesh objects), and what it does to a workload it
// may do only in the namespaces it made. Kubernetes' RBAC cannot say
// "the namespaces you made", so meshbench binds itself, in each namespace
// it makes, to a ClusterRole of namespaced rules (namespaceRoleName), and
// a ValidatingAdmissionPolicy the role comes with (policyName) lets its
// user bind that role only so: in a namespace labelled as meshbench's,
// to itself; and change or delete only such namespaces. The policy also
// refuses it what would reach beyond those namespaces from inside them:
// privileged pods, the node's file system or namespaces, Services with
// external IPs, and ServiceAccount token Secrets.
const (
	// namespacedRoleName is the ClusterRole (and its binding) of the
	// cluster-wide rules.
	namespacedRoleName = "meshbench-namespaced"
	// namespaceRoleName is the ClusterRole meshbench binds itself to in
	// each namespace it makes.
	namespaceRoleName = "meshbench-namespace"
	// readRoleName is the Role (and binding) of what meshbench reads in a
	// namespace the cluster has (kube-system, the mesh's).
	readRoleName = "meshbench-read"
	// policyName is the admission policy, and its binding.
	policyName = "meshbench-namespaced"
)

// namespacedClusterRules are the cluster-wide rules of the namespaced
// role. Writing namespaces and binding the namespace role are bounded by
// the admission policy.
var namespacedClusterRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: verbsManage},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: verbsRead},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: verbsRead},
	{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}},
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"get", "create"}},
	{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind", "get"}, ResourceNames: []string{namespaceRoleName}},
	// Doctor checks that the policy is there.
	{APIGroups: []string{admissionv1.GroupName}, Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
		Verbs: []string{"get"}, ResourceNames: []string{policyName}},
	// Clean-up finds its mesh objects by label in every namespace, and
	// an existing Istio's policies are read before meshbench adds its own.
	{APIGroups: []string{"security.istio.io"}, Resources: []string{"authorizationpolicies", "peerauthentications"}, Verbs: verbsRead},
	{APIGroups: []string{"networking.istio.io"}, Resources: []string{"gateways", "virtualservices"}, Verbs: verbsRead},
	{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways"}, Verbs: verbsRead},
	{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumnetworkpolicies"}, Verbs: verbsRead},
}

// namespaceRules are what meshbench does in a namespace it made: the
// workload, its Jobs and their logs, the proxies' metrics, the Lease and
// the runs' records, and the mesh objects it applies.
var namespaceRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps", "services", "serviceaccounts", "secrets"}, Verbs: verbsManage},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: verbsRead},
	{APIGroups: []string{""}, Resources: []string{"pods/log", "pods/proxy"}, Verbs: []string{"get"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: verbsManage},
	{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "daemonsets"}, Verbs: verbsRead},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: verbsManage},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: verbsManage},
	{APIGroups: []string{"security.istio.io"}, Resources: []string{"authorizationpolicies", "peerauthentications"}, Verbs: verbsManage},
	{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways"}, Verbs: verbsManage},
	{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumnetworkpolicies"}, Verbs: verbsManage},
	{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumendpoints"}, Verbs: verbsRead},
}

var (
	readPods     = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: verbsRead}
	readPodProxy = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/proxy"}, Verbs: []string{"get"}}
)

// installsCharts says whether a study's meshes install charts, which
// needs the role that is cluster-admin in effect.
func (p *kubePlatform) installsCharts() bool {
	for _, m := range p.opts.Meshes {
		if pr, err := lookupProfile(m.Profile); err == nil && !m.UseExisting && len(pr.ChartsFor(p.opts.Ingress)) > 0 {
			return true
		}
	}
	return false
}

// namespacedRole is the role of a study that installs no charts.
func (p *kubePlatform) namespacedRole() (Role, error) {
	reads := map[string][]rbacv1.PolicyRule{
		// The cluster's DNS domain.
		"kube-system": {{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"coredns"}}},
	}
	for _, m := range p.opts.Meshes {
		pr, err := lookupProfile(m.Profile)
		if err != nil {
			return Role{}, err
		}
		if err := p.existingIngress(m, pr); err != nil {
			return Role{}, err
		}
		for ns, rules := range meshReads(pr) {
			reads[ns] = append(reads[ns], rules...)
		}
	}
	for ns, rules := range reads {
		reads[ns] = mergeRules(rules)
	}
	return Role{Rules: mergeRules(namespacedClusterRules), Namespaced: true, NamespaceRules: mergeRules(namespaceRules), Reads: reads}, nil
}

// meshReads are what a profile's checks and samples read in the
// namespaces of a mesh the cluster runs: its pods (verification, the
// record of its images, resources), ztunnel's metrics for ambient's
// peer-identity, and Cilium's agent and settings.
func meshReads(pr profile) map[string][]rbacv1.PolicyRule {
	out := map[string][]rbacv1.PolicyRule{}
	switch pr.Mesh {
	case mesh.Istio:
		out[istioNamespace] = []rbacv1.PolicyRule{readPods}
		if pr.Plane == mesh.PlaneNodeProxy && !pr.Waypoint {
			out[istioNamespace] = append(out[istioNamespace], readPodProxy)
		}
	case mesh.Linkerd:
		out[linkerdNamespace] = []rbacv1.PolicyRule{readPods}
	case mesh.Cilium:
		out[ciliumNamespace] = []rbacv1.PolicyRule{readPods,
			{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get"}, ResourceNames: []string{ciliumAgent}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{ciliumConfig}}}
		out[spireNamespace] = []rbacv1.PolicyRule{readPods}
	}
	return out
}

// bindSelf gives this user, under the namespaced role, the namespace
// rules in a namespace meshbench just made, and waits until the API
// server's authoriser knows it. Under a role with cluster-wide rights it
// does nothing.
func (p *kubePlatform) bindSelf(ctx context.Context, ns string) error {
	scoped, err := p.scoped(ctx)
	if err != nil || !scoped {
		return err
	}
	subject, err := p.self(ctx)
	if err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: objMeta(ns, namespaceRoleName, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: namespaceRoleName},
		Subjects:   []rbacv1.Subject{subject},
	}
	_, err = p.c.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: bind meshbench's namespace role (ClusterRole %s) to itself: %w; bind the role a run of the study needs: %s", ns, namespaceRoleName, err, rbacCommand)
	}
	probe := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
		Namespace: ns, Verb: "create", Resource: "configmaps"}}}
	return wait.PollUntilContextTimeout(ctx, pollInterval, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := p.c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, probe, metav1.CreateOptions{})
		if err != nil {
			return false, pollErr(ctx, err)
		}
		return r.Status.Allowed, nil
	})
}

// scoped says whether this user holds the namespaced role rather than
// cluster-wide rights: whether it may not make Deployments everywhere.
func (p *kubePlatform) scoped(ctx context.Context) (bool, error) {
	if p.scopedUser != nil {
		return *p.scopedUser, nil
	}
	r, err := p.c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments"}}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("ask the API server what this user may do: %w", err)
	}
	p.scopedUser = ptr(!r.Status.Allowed)
	return *p.scopedUser, nil
}

// self is this user as a binding's subject, as the API server knows it.
func (p *kubePlatform) self(ctx context.Context) (rbacv1.Subject, error) {
	r, err := p.c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return rbacv1.Subject{}, fmt.Errorf("ask the API server who this user is: %w", err)
	}
	name := r.Status.UserInfo.Username
	if sa, ok := strings.CutPrefix(name, "system:serviceaccount:"); ok {
		if ns, n, ok := strings.Cut(sa, ":"); ok {
			return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}, nil
		}
	}
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}, nil
}

// policy is the admission policy of the namespaced role for a subject,
// and its binding.
func policy(subject rbacv1.Subject) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	var who string
	switch subject.Kind {
	case rbacv1.GroupKind:
		who = strconv.Quote(subject.Name) + " in request.userInfo.groups"
	case rbacv1.ServiceAccountKind:
		who = "request.userInfo.username == " + strconv.Quote("system:serviceaccount:"+subject.Namespace+":"+subject.Name)
	default:
		who = "request.userInfo.username == " + strconv.Quote(subject.Name)
	}
	ours := func(o string) string {
		return fmt.Sprintf("%s != null && has(%s.metadata.labels) && %q in %s.metadata.labels && %s.metadata.labels[%q] == %q",
			o, o, labelManagedBy, o, o, labelManagedBy, managedBy)
	}
	self := `s.kind == "User" && s.name == request.userInfo.username || ` +
		`s.kind == "ServiceAccount" && "system:serviceaccount:" + s.namespace + ":" + s.name == request.userInfo.username`
	rule := func(group, resource string, ops ...admissionv1.OperationType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{Operations: ops,
			Rule: admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}}}}
	}
	upsert := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	forbidden := ptr(metav1.StatusReasonForbidden)
	check := func(resource, expr, msg string) admissionv1.Validation {
		return admissionv1.Validation{Expression: fmt.Sprintf("request.resource.resource != %q || (%s)", resource, expr), Message: msg, Reason: forbidden}
	}
	workload := func(resource string) admissionv1.Validation {
		return check(resource, `!(has(variables.pod.hostNetwork) && variables.pod.hostNetwork) && !(has(variables.pod.hostPID) && variables.pod.hostPID) && `+
			`!(has(variables.pod.hostIPC) && variables.pod.hostIPC) && (!has(variables.pod.volumes) || variables.pod.volumes.all(v, !has(v.hostPath))) && `+
			`has(variables.pod.securityContext) && has(variables.pod.securityContext.runAsNonRoot) && variables.pod.securityContext.runAsNonRoot && `+
			`variables.containers.all(c, has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && !c.securityContext.allowPrivilegeEscalation && `+
			`!(has(c.securityContext.privileged) && c.securityContext.privileged) && `+
			`!(has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add) && size(c.securityContext.capabilities.add) > 0) && `+
			`!(has(c.securityContext.runAsNonRoot) && !c.securityContext.runAsNonRoot) && !(has(c.securityContext.runAsUser) && c.securityContext.runAsUser == 0) && `+
			`(!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)))`,
			"meshbench's pods run as non-root with no privilege, capability, host namespace, host path or host port")
	}
	vap := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Labels: map[string]string{labelManagedBy: managedBy}},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{
				rule("", "namespaces", admissionv1.Update, admissionv1.Delete),
				rule(rbacv1.GroupName, "rolebindings", upsert...),
				rule("apps", "deployments", upsert...),
				rule("batch", "jobs", upsert...),
				rule("", "services", upsert...),
				rule("", "secrets", upsert...),
			}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "meshbench", Expression: who}},
			Variables: []admissionv1.Variable{
				{Name: "pod", Expression: "object.spec.template.spec"},
				{Name: "containers", Expression: "variables.pod.containers + (has(variables.pod.initContainers) ? variables.pod.initContainers : [])"},
			},
			Validations: []admissionv1.Validation{
				check("namespaces", ours("oldObject"), "meshbench may change or delete only the namespaces it made"),
				check("rolebindings", ours("namespaceObject")+fmt.Sprintf(` && object.roleRef.kind == "ClusterRole" && object.roleRef.name == %q && size(object.subjects) > 0 && object.subjects.all(s, %s)`, namespaceRoleName, self),
					"meshbench may bind only its namespace role, to itself, in a namespace it made"),
				workload("deployments"),
				workload("jobs"),
				check("services", `(!has(object.spec.type) || object.spec.type == "ClusterIP") && (!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0)`,
					"meshbench's Services are ClusterIP, with no external IPs"),
				check("secrets", `!has(object.type) || object.type != "kubernetes.io/service-account-token"`,
					"meshbench makes no ServiceAccount token Secrets"),
			},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Labels: map[string]string{labelManagedBy: managedBy}},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policyName, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	return vap, binding
}
