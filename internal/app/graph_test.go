package app

import (
	"net/http"
	"slices"
	"testing"
)

func TestGraphCallTrees(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		graph   string
		servers int // servers one request reaches
		// top lists the entry's direct calls, in script order.
		top []string
	}{
		{name: "tiered", graph: "tiered", servers: 5, top: []string{"tier-2-app-a", "tier-2-app-b"}},
		// productpage, details, reviews, then ratings unless reviews-v1 answered.
		{name: "bookinfo", graph: "bookinfo", servers: -1, top: []string{"details", "reviews"}},
		// frontend 1 + productcatalog 1 + currency 1 + cart 2 (redis) +
		// recommendation 2 + shipping 1 + checkout 1+1+1+1+2+1+1 + ad 1.
		{name: "boutique", graph: "boutique", servers: 17, top: []string{"productcatalogservice", "currencyservice", "cartservice",
			"recommendationservice", "shippingservice", "checkoutservice", "adservice"}},
		// front 1 + leaf x3 + mid (1 or 2) + leaf x2.
		{name: "custom", graph: "testdata/custom.yaml", servers: -1, top: []string{"leaf", "leaf", "leaf", "mid", "leaf", "leaf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := mustGraph(t, tt.graph)
			gs := startGraph(t, g, GraphOptions{})
			for range 3 {
				status, root, _ := get(t, http.DefaultClient, gs.EntryURL("ns-1"))
				if status != http.StatusOK || root.Status != 200 || root.Service != g.Entry {
					t.Fatalf("status %d, root %+v", status, root)
				}
				var top []string
				for _, c := range root.Calls {
					top = append(top, c.Service)
				}
				if !slices.Equal(top, tt.top) {
					t.Errorf("entry calls %v, want %v", top, tt.top)
				}
				if tt.servers > 0 && root.servers() != tt.servers {
					t.Errorf("one request reached %d servers, want %d", root.servers(), tt.servers)
				}
			}
		})
	}
}

func TestGraphVersionsTakeTurns(t *testing.T) {
	t.Parallel()
	gs := startGraph(t, mustGraph(t, "bookinfo"), GraphOptions{})
	seen := map[string]int{}
	for range 6 {
		_, root, _ := get(t, http.DefaultClient, gs.EntryURL("ns-1"))
		reviews := root.Calls[1]
		seen[reviews.Version]++
		want := 1 // v2 and v3 call ratings, v1 calls nothing
		if reviews.Version == "v1" {
			want = 0
		}
		if len(reviews.Calls) != want || (want == 1 && reviews.Calls[0].Service != "ratings") {
			t.Errorf("reviews %s made calls %+v", reviews.Version, reviews.Calls)
		}
		if root.servers() != 3+want {
			t.Errorf("reached %d servers, want %d", root.servers(), 3+want)
		}
	}
	if seen["v1"] != 2 || seen["v2"] != 2 || seen["v3"] != 2 {
		t.Errorf("versions answered %v, want each twice", seen)
	}
}

func TestGraphNamespacesAreIsolated(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, "tiered")
	gs := startGraph(t, g, GraphOptions{Namespaces: 3})
	if len(gs.Endpoints) != 3*len(g.Services) {
		t.Fatalf("%d endpoints, want %d", len(gs.Endpoints), 3*len(g.Services))
	}
	for _, ns := range []string{"ns-1", "ns-2", "ns-3"} {
		_, root, _ := get(t, http.DefaultClient, gs.EntryURL(ns))
		var walk func(n node)
		walk = func(n node) {
			if n.Namespace != ns {
				t.Errorf("request to %s reached %s in %q", ns, n.Service, n.Namespace)
			}
			for _, c := range n.Calls {
				walk(c)
			}
		}
		walk(root)
		if root.servers() != 5 {
			t.Errorf("%s: %d servers", ns, root.servers())
		}
	}
}
