package cpstudy

import (
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/xdsload"
)

// In ambient-waypoint mode every ztunnel sees every change, and a
// namespace's waypoint sees its own namespace's pods and services but not
// its workload-selecting policy.
func TestAffectedWaypoint(t *testing.T) {
	l := newLayout(1000)
	ps, targets := proxies(&l, AmbientWaypoint)
	if want := len(l.Nodes) + len(l.Namespaces); len(ps) != want {
		t.Fatalf("%d proxies, want %d ztunnels and waypoints", len(ps), want)
	}
	c := &churn{mode: AmbientWaypoint, targets: targets}
	for _, tc := range []struct {
		name          string
		policy        bool
		wantWaypoints int
	}{
		{name: "pod or service", wantWaypoints: 1},
		{name: "policy", policy: true, wantWaypoints: 0},
	} {
		hit, n := c.affected(2, tc.policy)
		var zt, wp int
		for i, h := range hit {
			if !h {
				continue
			}
			switch ps[i].Kind {
			case xdsload.Ztunnel:
				zt++
			case xdsload.Waypoint:
				wp++
				if targets[i].tier != 2 || !strings.Contains(ps[i].Node.ID, "~"+l.Namespaces[2]+".svc") {
					t.Errorf("%s: waypoint %s of tier %d affected by a change in tier 2", tc.name, ps[i].Node.ID, targets[i].tier)
				}
			}
		}
		if zt != len(l.Nodes) || wp != tc.wantWaypoints || n != zt+wp {
			t.Errorf("%s: %d ztunnels and %d waypoints affected (n=%d), want %d and %d", tc.name, zt, wp, n, len(l.Nodes), tc.wantWaypoints)
		}
	}
}

// One waiter serves ztunnels and waypoints: each response is matched by
// its own type's rule.
func TestWaiterMatchesByType(t *testing.T) {
	w := &waiter{done: make(chan struct{}), pending: []bool{true, true}, left: 2, start: time.Now(),
		match: map[string]func(*xdsload.Response) bool{
			xdsload.TypeAddress:  func(r *xdsload.Response) bool { return strings.Contains(string(r.Raw), "Pod/ns/p") },
			xdsload.TypeEndpoint: func(r *xdsload.Response) bool { return strings.Contains(string(r.Raw), "p;ns;") },
		}}
	w.observe(1, &xdsload.Response{TypeURL: xdsload.TypeCluster, Raw: []byte("p;ns;")}, time.Now())
	w.observe(1, &xdsload.Response{TypeURL: xdsload.TypeEndpoint, Raw: []byte("q;ns;")}, time.Now())
	if w.left != 2 {
		t.Fatalf("a response of another type or without the change counted: %d left", w.left)
	}
	w.observe(0, &xdsload.Response{TypeURL: xdsload.TypeAddress, Raw: []byte("x Pod/ns/p y")}, time.Now())
	w.observe(1, &xdsload.Response{TypeURL: xdsload.TypeEndpoint, Raw: []byte("p;ns;x")}, time.Now())
	select {
	case <-w.done:
	default:
		t.Fatalf("both proxies saw the change, yet %d left", w.left)
	}
}
