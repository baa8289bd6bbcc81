package kube

import (
	"context"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// ignoredKinds change on their own while a cluster runs, whatever
// meshbench does.
var ignoredKinds = map[string]bool{"Event": true, "Lease": true}

// snapshot lists every object of every listable kind in the cluster, as
// "Kind.group namespace/name", so that clean-up can be checked to leave
// the cluster exactly as it found it.
func snapshot(t *testing.T, ctx context.Context, kubeconfig string) map[string]bool {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	out := map[string]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if ignoredKinds[r.Kind] || strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list %s: %v", r.Name, err)
			}
			for _, o := range items.Items {
				out[r.Kind+"."+gv.Group+" "+o.GetNamespace()+"/"+o.GetName()] = true
			}
		}
	}
	return out
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// diffSnapshots lists what after has that before had not.
func diffSnapshots(before, after map[string]bool) []string {
	var extra []string
	for k := range after {
		if !before[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return extra
}
