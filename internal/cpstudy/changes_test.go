package cpstudy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// At 5,000 pods (20 namespaces) the 16 changes rewrite four different
// policies once each, with principals named by sequence number. Unless
// the churn restores them, the next mode's changes write what the
// policies already hold: the API server stores nothing, istiod hears of
// nothing, and ztunnels, which receive only changed authorizations, never
// see the change.
func TestChurnRestoresPoliciesSoEveryModeChangesThem(t *testing.T) {
	ctx := context.Background()
	l := newLayout(5000)
	var objs []runtime.Object
	for i, ns := range l.Namespaces {
		objs = append(objs, authzPolicy(ns, l.caller(i), nil))
	}
	k := kube{cs: fake.NewClientset(),
		dyn: dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{gvrAuthz: "AuthorizationPolicyList"}, objs...)}
	spec := func(ns string) any {
		t.Helper()
		p, err := k.dyn.Resource(gvrAuthz).Namespace(ns).Get(ctx, "tier-allow", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Object["spec"]
	}
	for _, m := range []Mode{Sidecar, Ambient} {
		c := &churn{k: k, l: &l, mode: m, tr: &tracker{}}
		var changed []string
		for seq := range 16 {
			_, res, err := c.make(ctx, seq)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if res.Kind != AuthzChange {
				continue
			}
			token := "cluster.local/ns/" + res.Namespace + "/sa/mbchg-" + []string{"00001", "00005", "00009", "00013"}[len(changed)]
			want := authzPolicy(res.Namespace, l.caller(slices.Index(l.Namespaces, res.Namespace)), []string{token}).Object["spec"]
			if got := spec(res.Namespace); !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("%s, change %d: policy %v, want %v", m, seq, got, want)
			}
			changed = append(changed, res.Namespace)
		}
		if len(changed) != 4 || len(slices.Compact(slices.Clone(changed))) != 4 {
			t.Fatalf("%s: authorization changes in %v, want four namespaces", m, changed)
		}
		if _, _, err := c.make(ctx, 1); err == nil || !strings.Contains(err.Error(), "already holds") {
			t.Errorf("%s: a change that leaves the policy as it is was made (err %v)", m, err)
		}
		if err := c.undo(ctx); err != nil {
			t.Fatal(err)
		}
		for i, ns := range l.Namespaces {
			if got, want := spec(ns), authzPolicy(ns, l.caller(i), nil).Object["spec"]; !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("after %s's churn, %s's policy is %v, want %v as created", m, ns, got, want)
			}
		}
	}
}
