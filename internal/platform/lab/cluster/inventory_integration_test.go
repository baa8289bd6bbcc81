package cluster

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestIntegrationInventoryRemovesNothing lists a running lab's processes,
// namespaces, veths, iptables chains, cgroups and state, as lab down
// --dry-run prints them, and checks that all of it is still there after.
func TestIntegrationInventoryRemovesNothing(t *testing.T) {
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app"}, NodeConfig{Name: "load", Role: "load"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := l.CreatePods(ctx, []PodSpec{servePod("ns-1", "web-0", "a", 8080)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ApplyService(ctx, ServiceSpec{Namespace: "ns-1", Name: "web", Selector: map[string]string{"app": "web"}, Port: 80, TargetPort: 8080}); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := listNetns(l.Prefix())
	if err != nil {
		t.Fatal(err)
	}
	st, err := readState(l.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range st.Pods {
		for _, c := range p.Containers {
			pids = append(pids, c.PID)
		}
	}
	r, err := Inventory(ctx, TeardownOptions{StateDir: l.StateDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Prefix != l.Prefix() || !slices.Equal(r.Namespaces, before) || len(before) == 0 {
		t.Errorf("inventory of %s lists namespaces %v, want %v", l.Prefix(), r.Namespaces, before)
	}
	if len(r.Veths) == 0 || len(r.Cgroups) == 0 {
		t.Errorf("inventory lists veths %v and cgroups %v, want some of each", r.Veths, r.Cgroups)
	}
	if !slices.ContainsFunc(r.Chains, func(c string) bool { return strings.Contains(c, "nat/MB-SERVICES") }) {
		t.Errorf("inventory chains %v lack the Service chains", r.Chains)
	}
	if len(pids) == 0 {
		t.Fatal("the lab's state lists no container")
	}
	for _, pid := range pids {
		if !slices.ContainsFunc(r.Processes, func(p string) bool { return strings.HasPrefix(p, strconv.Itoa(pid)+" ") }) {
			t.Errorf("inventory processes %v lack container pid %d", r.Processes, pid)
		}
	}
	if !slices.Contains(r.Files, l.StateDir()) {
		t.Errorf("inventory files %v lack the state directory %s", r.Files, l.StateDir())
	}
	// Nothing was removed.
	after, err := listNetns(l.Prefix())
	if err != nil || !slices.Equal(after, before) {
		t.Errorf("namespaces after the inventory: %v (%v), want %v", after, err, before)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("container pid %d gone after the inventory: %v", pid, err)
		}
	}
	for _, p := range append(r.Cgroups, l.StateDir()) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s gone after the inventory: %v", p, err)
		}
	}
	if err := l.WaitReady(ctx); err != nil {
		t.Errorf("the lab is not ready after the inventory: %v", err)
	}
}
