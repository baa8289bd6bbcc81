package topology

import (
	"reflect"
	"testing"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	if got, want := BuiltinNames(), []string{"bookinfo", "boutique", "bulk", "chain", "tiered"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("BuiltinNames() = %v, want %v", got, want)
	}
	tests := []struct {
		name        string
		entry       string
		services    int
		deployments []string
		calls       map[string][]string
	}{
		{
			name: "tiered", entry: "tier-1-app-a", services: 4,
			deployments: []string{"tier-1-app-a", "tier-2-app-a", "tier-2-app-b", "tier-3-app-a"},
			calls: map[string][]string{
				"tier-1-app-a": {"tier-2-app-a", "tier-2-app-b"},
				"tier-2-app-b": {"tier-3-app-a"},
				"tier-3-app-a": nil,
			},
		},
		{
			name: "bookinfo", entry: "productpage", services: 4,
			deployments: []string{"productpage", "details", "reviews-v1", "reviews-v2", "reviews-v3", "ratings"},
			calls: map[string][]string{
				"productpage": {"details", "reviews"},
				"reviews":     {"ratings"},
				"ratings":     nil,
			},
		},
		{
			name: "boutique", entry: "frontend", services: 12,
			deployments: []string{"frontend", "productcatalogservice", "currencyservice", "cartservice", "redis-cart",
				"recommendationservice", "shippingservice", "checkoutservice", "paymentservice", "emailservice", "adservice", "loadgenerator"},
			calls: map[string][]string{
				"frontend":              {"productcatalogservice", "currencyservice", "cartservice", "recommendationservice", "shippingservice", "checkoutservice", "adservice"},
				"checkoutservice":       {"productcatalogservice", "shippingservice", "currencyservice", "cartservice", "paymentservice", "emailservice"},
				"recommendationservice": {"productcatalogservice"},
				"cartservice":           {"redis-cart"},
				"loadgenerator":         {"frontend"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := Builtin(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != tt.name || g.Entry != tt.entry || len(g.Services) != tt.services {
				t.Errorf("graph %q entry %q with %d services", g.Name, g.Entry, len(g.Services))
			}
			var names []string
			for _, d := range g.Deployments() {
				names = append(names, d.Name)
			}
			if !reflect.DeepEqual(names, tt.deployments) {
				t.Errorf("Deployments() = %v, want %v", names, tt.deployments)
			}
			for svc, want := range tt.calls {
				if got := g.Calls(svc); !reflect.DeepEqual(got, want) {
					t.Errorf("Calls(%q) = %v, want %v", svc, got, want)
				}
			}
		})
	}
}

func TestBoutiqueProtocols(t *testing.T) {
	t.Parallel()
	g, err := Builtin("boutique")
	if err != nil {
		t.Fatal(err)
	}
	// Every edge is gRPC but the two that are not in Online Boutique:
	// cart -> redis (TCP, the closest here being HTTP/1.1) and Locust ->
	// frontend (HTTP).
	plain := map[string]string{"cartservice": "redis-cart", "loadgenerator": "frontend"}
	edges := 0
	for _, s := range g.Services {
		for _, e := range g.Edges(s.Name) {
			edges++
			want := ProtocolGRPC
			if plain[s.Name] == e.Service {
				want = ProtocolHTTP
			}
			if e.Protocol != want {
				t.Errorf("%s -> %s over %s, want %s", s.Name, e.Service, e.Protocol, want)
			}
		}
	}
	if edges != 16 {
		t.Errorf("%d edges, want 16", edges)
	}
	if g.EntryProtocol.Or() != ProtocolHTTP {
		t.Errorf("the frontend is called over %s, want http", g.EntryProtocol.Or())
	}
}

func TestBuiltinDetails(t *testing.T) {
	t.Parallel()
	tiered, _ := Builtin("tiered")
	for _, d := range tiered.Deployments() {
		r := d.Resources.Requirements()
		if r.CPURequestMilli != 700 || r.CPULimitMilli != 700 || r.MemRequestBytes != 500<<20 || r.MemLimitBytes != 500<<20 {
			t.Errorf("tiered %s resources = %+v, want 700m / 500Mi request = limit", d.Name, r)
		}
	}
	boutique, _ := Builtin("boutique")
	for _, d := range boutique.Deployments() {
		if d.Replicas != 3 {
			t.Errorf("boutique %s replicas = %d, want 3", d.Name, d.Replicas)
		}
	}
	bookinfo, _ := Builtin("bookinfo")
	for _, d := range bookinfo.Deployments() {
		if d.Resources != (Resources{}) || d.ServiceAccount != "bookinfo-"+d.Service || d.Port != 9080 {
			t.Errorf("bookinfo %s = %+v", d.Name, d)
		}
	}
	// A mutated copy must not leak into the next caller's graph.
	tiered.Services[0].Replicas = 99
	if again, _ := Builtin("tiered"); again.Services[0].Replicas != 1 {
		t.Error("Builtin returned a shared graph")
	}
	if _, err := Builtin("../builtin/tiered"); err == nil {
		t.Error("Builtin accepted a path")
	}
}

func TestBehavior(t *testing.T) {
	t.Parallel()
	g, _ := Builtin("bookinfo")
	tests := []struct {
		name, service, version string
		wantVersion            string
		wantCalls              int
		wantErr                bool
	}{
		{name: "unversioned", service: "details", wantVersion: "v1"},
		{name: "unversioned explicit v1", service: "details", version: "v1", wantVersion: "v1"},
		{name: "v1 calls nothing", service: "reviews", version: "v1", wantVersion: "v1"},
		{name: "v3 calls ratings", service: "reviews", version: "v3", wantVersion: "v3", wantCalls: 1},
		{name: "version required", service: "reviews", wantErr: true},
		{name: "unknown version", service: "reviews", version: "v9", wantErr: true},
		{name: "unknown service", service: "nope", wantErr: true},
		{name: "version on unversioned", service: "details", version: "v2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := g.Behavior(tt.service, tt.version)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Behavior error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (b.Version != tt.wantVersion || len(b.Script) != tt.wantCalls) {
				t.Errorf("Behavior = %+v", b)
			}
		})
	}
}

func TestNamespaces(t *testing.T) {
	t.Parallel()
	if got := Namespaces(3); !reflect.DeepEqual(got, []string{"ns-1", "ns-2", "ns-3"}) {
		t.Errorf("Namespaces(3) = %v", got)
	}
	if got := Namespaces(0); len(got) != 0 {
		t.Errorf("Namespaces(0) = %v", got)
	}
	if got := Namespaces(50); got[49] != "ns-50" {
		t.Errorf("Namespaces(50)[49] = %q", got[49])
	}
}
