package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// configAs is the REST configuration of a kubeconfig context's user.
func configAs(t *testing.T, c *testCluster, kubeContext string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bindPrinted applies, as the cluster's admin (kubectl apply), what
// `meshbench kubernetes rbac` prints for a role and a user, and removes
// it when the test ends.
func bindPrinted(t *testing.T, ctx context.Context, c *testCluster, role Role, user string) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteRBAC(&b, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}); err != nil {
		t.Fatal(err)
	}
	cfg := configAs(t, c, "it")
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&b, 4096)
	var made []*unstructured.Unstructured
	t.Cleanup(func() {
		for i := len(made) - 1; i >= 0; i-- {
			o := made[i]
			m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
			if err == nil {
				_ = dyn.Resource(m.Resource).Namespace(o.GetNamespace()).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
			}
		}
	})
	for {
		var o unstructured.Unstructured
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the printed RBAC: %v", err)
		}
		if len(o.Object) == 0 {
			continue
		}
		m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
		if err != nil {
			t.Fatalf("the printed RBAC: %s: %v", describe(&o), err)
		}
		if _, err := dyn.Resource(m.Resource).Namespace(o.GetNamespace()).Create(ctx, &o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("applying the printed RBAC: %s: %v", describe(&o), err)
		}
		made = append(made, &o)
	}
}

// escalations tries, as a user bound to the namespaced role (meshbench
// kubernetes rbac for a study that installs no charts), every way the
// audit named for such a user to reach beyond meshbench's own
// namespaces, and checks that the API server refuses each. own is a
// namespace meshbench made as that user. Writes are dry runs: the API
// server authorises and admits them as it would the real thing, and a
// role that let one through leaves nothing behind.
func escalations(t *testing.T, ctx context.Context, c *testCluster, kubeContext, own string) {
	t.Helper()
	as := clientAs(t, c, kubeContext)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	// The control: what a run does in its own namespace is allowed, so
	// that the refusals below are the role's, not a broken client.
	if _, err := as.CoreV1().ConfigMaps(own).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-control"}}, dry); err != nil {
		t.Fatalf("the control: a ConfigMap in meshbench's own %s: %v", own, err)
	}
	// What the cluster's own configuration would be on EKS, and another
	// team's namespace.
	cms := c.Client.CoreV1().ConfigMaps("kube-system")
	for _, name := range []string{"coredns", "aws-auth"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err == nil {
			t.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		} else if !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	const otherTeam = "team-b"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherTeam}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), otherTeam, metav1.DeleteOptions{})
	})
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "meshbench.test/x"}}}
	privileged := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, HostPID: true,
		Containers: []corev1.Container{{Name: "c", Image: "meshbench.test/x",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
			VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}}},
		Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
	}
	self := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: smallUser}
	binding := func(ns, kind, role string, who rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-escalate", Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}, Subjects: []rbacv1.Subject{who}}
	}
	everything := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	webhook := func() []admissionv1.MutatingWebhook {
		return []admissionv1.MutatingWebhook{{Name: "steal.meshbench.test", AdmissionReviewVersions: []string{"v1"},
			SideEffects:  ptr(admissionv1.SideEffectClassNone),
			ClientConfig: admissionv1.WebhookClientConfig{URL: ptr("https://127.0.0.1:9/")},
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}}
	}
	imp := configAs(t, c, kubeContext)
	imp.Impersonate = rest.ImpersonationConfig{UserName: "meshbench-admin", Groups: []string{"system:masters"}}
	impersonated, err := kubernetes.NewForConfig(imp)
	if err != nil {
		t.Fatal(err)
	}

	attempts := []struct {
		name string
		try  func() error
	}{
		// A token for another account.
		{"a token for kube-system/default", func() error {
			_, err := as.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "default",
				&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))}}, dry)
			return err
		}},
		{"a token Secret for kube-system/default", func() error {
			_, err := as.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-token",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}}, Type: corev1.SecretTypeServiceAccountToken}, dry)
			return err
		}},
		{"a token Secret for a ServiceAccount in its own namespace", func() error {
			_, err := as.CoreV1().Secrets(own).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-token",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: loadServiceAccount}}, Type: corev1.SecretTypeServiceAccountToken}, dry)
			return err
		}},
		{"acting as the cluster's admin (impersonation)", func() error {
			_, err := impersonated.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		}},
		// Pods and webhooks outside meshbench's namespaces.
		{"a pod in default", func() error {
			_, err := as.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-pod"}, Spec: pod}, dry)
			return err
		}},
		{"a Deployment in kube-system", func() error {
			_, err := as.AppsV1().Deployments("kube-system").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-deploy"},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: pod}}}, dry)
			return err
		}},
		{"a privileged Job with the node's file system in its own namespace", func() error {
			_, err := as.BatchV1().Jobs(own).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-root"},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: privileged}}}, dry)
			return err
		}},
		{"a Service with external IPs in its own namespace", func() error {
			_, err := as.CoreV1().Services(own).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-mitm"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}, ExternalIPs: []string{"10.96.0.1"}}}, dry)
			return err
		}},
		{"a mutating webhook", func() error {
			_, err := as.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-steal"}, Webhooks: webhook()}, dry)
			return err
		}},
		{"a validating webhook", func() error {
			w := webhook()[0]
			_, err := as.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-steal"}, Webhooks: []admissionv1.ValidatingWebhook{{Name: w.Name,
					AdmissionReviewVersions: w.AdmissionReviewVersions, SideEffects: w.SideEffects, ClientConfig: w.ClientConfig, Rules: w.Rules}}}, dry)
			return err
		}},
		{"the kubelet's API (nodes/proxy)", func() error {
			return as.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + testNodes[0].Name + "/proxy/pods").Do(ctx).Error()
		}},
		{"labelling a node", func() error {
			_, err := as.CoreV1().Nodes().Patch(ctx, testNodes[0].Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"a CRD", func() error {
			crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": "escalations.meshbench.test"},
				"spec": map[string]any{"group": "meshbench.test", "scope": "Namespaced",
					"names":    map[string]any{"plural": "escalations", "kind": "Escalation"},
					"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}}}
			_, err := dynamic.NewForConfigOrDie(configAs(t, c, kubeContext)).Resource(crdGVR).Create(ctx, crd, dry)
			return err
		}},
		// Secrets outside meshbench's namespaces.
		{"reading Secrets in kube-system", func() error {
			_, err := as.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"reading Secrets in every namespace", func() error {
			_, err := as.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		// The cluster's own configuration.
		{"creating kube-system/aws-auth", func() error {
			_, err := as.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth-2"}}, dry)
			return err
		}},
		{"changing kube-system/aws-auth", func() error {
			_, err := as.CoreV1().ConfigMaps("kube-system").Patch(ctx, "aws-auth", types.MergePatchType, []byte(`{"data":{"mapUsers":"x"}}`),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"changing CoreDNS's ConfigMap", func() error {
			_, err := as.CoreV1().ConfigMaps("kube-system").Patch(ctx, "coredns", types.MergePatchType, []byte(`{"data":{"Corefile":"x"}}`),
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"deleting CoreDNS's ConfigMap", func() error {
			return as.CoreV1().ConfigMaps("kube-system").Delete(ctx, "coredns", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		// Binding a role.
		{"binding meshbench's namespace role in kube-system", func() error {
			_, err := as.RbacV1().RoleBindings("kube-system").Create(ctx, binding("kube-system", "ClusterRole", namespaceRoleName, self), dry)
			return err
		}},
		{"binding cluster-admin in its own namespace", func() error {
			_, err := as.RbacV1().RoleBindings(own).Create(ctx, binding(own, "ClusterRole", "cluster-admin", self), dry)
			return err
		}},
		{"binding meshbench's namespace role to another user", func() error {
			_, err := as.RbacV1().RoleBindings(own).Create(ctx, binding(own, "ClusterRole", namespaceRoleName,
				rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: tenantUser}), dry)
			return err
		}},
		{"a ClusterRoleBinding to cluster-admin", func() error {
			_, err := as.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-escalate"},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{self}}, dry)
			return err
		}},
		{"a ClusterRole granting everything", func() error {
			_, err := as.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-escalate"}, Rules: everything}, dry)
			return err
		}},
		{"a Role granting everything in its own namespace", func() error {
			_, err := as.RbacV1().Roles(own).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "meshbench-it-escalate"}, Rules: everything}, dry)
			return err
		}},
		// Namespaces that are not meshbench's.
		{"labelling default as meshbench's", func() error {
			_, err := as.CoreV1().Namespaces().Patch(ctx, "default", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+labelManagedBy+`":"`+managedBy+`"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"deleting another team's namespace", func() error {
			return as.CoreV1().Namespaces().Delete(ctx, otherTeam, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
	}
	for _, a := range attempts {
		err := a.try()
		t.Logf("escalation %q: %v", a.name, err)
		if !apierrors.IsForbidden(err) {
			t.Errorf("escalation %q as the namespaced role: %v, want the API server to refuse it (forbidden)", a.name, err)
		}
	}
	// What cannot be tried by a dry run, asked of the authoriser.
	for _, ra := range []authv1.ResourceAttributes{
		{Namespace: own, Verb: "create", Resource: "pods", Subresource: "exec"},
		{Namespace: own, Verb: "update", Resource: "pods", Subresource: "ephemeralcontainers"},
		{Verb: "escalate", Group: rbacv1.GroupName, Resource: "clusterroles"},
		{Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles", Name: "cluster-admin"},
	} {
		r, err := as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			t.Errorf("escalation: the namespaced role may %s", what(authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}))
		}
	}
}

// dynamic is a dynamic client of the test cluster as its admin.
func (c *testCluster) dynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(configAs(t, c, "it"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
