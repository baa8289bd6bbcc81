package lab

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshbench/meshbench/internal/grpcapp"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform/lab/cluster"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/testenv"
	"github.com/meshbench/meshbench/internal/topology"
)

// balanceGraph: a front that calls three replicas of back over gRPC.
const balanceGraph = `
name: balance
entry: front
services:
- name: front
  script: [{call: {service: back, protocol: grpc}}]
- name: back
  replicas: 3
`

// TestIntegrationGRPCBalancing sends 60 gRPC calls over one long-lived
// connection from the load pod to back's three replicas under each mesh,
// and counts the replicas that answered. An L4 path (no mesh: the node's
// Service DNAT; ambient: the node proxy, as ztunnel) picks a replica per
// connection, so one replica takes every call; an L7 proxy (a sidecar, a
// waypoint) balances every request over all three. Every install also
// passes the http2-calls check: front's gRPC call to back answers through
// that mesh.
func TestIntegrationGRPCBalancing(t *testing.T) {
	needLab(t)
	_, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy: %v", err)
	g, err := topology.Parse([]byte(balanceGraph))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := upLab(t, ctx, Options{}, g)
	l, err := p.running()
	if err != nil {
		t.Fatal(err)
	}
	back, ok := l.Service("ns-1", "back")
	loadPod, ok2 := l.Pod("ns-1", LoadPodName)
	if !ok || !ok2 {
		t.Fatal("no back Service or load pod")
	}
	target := net.JoinHostPort(back.VIP.String(), "8080")

	tests := []struct {
		profile  string
		replicas int // how many replicas the 60 calls reach
	}{
		{"baseline", 1},
		{"sidecar", 3},
		{"ambient", 1},
		{"ambient-waypoint", 3},
	}
	for _, tt := range tests {
		checks, err := p.InstallMesh(ctx, mesh.MeshSpec{Profile: tt.profile})
		if err != nil {
			t.Fatalf("%s: install: %v", tt.profile, err)
		}
		if tt.profile != "baseline" {
			if c := findCheck(checks, dataplane.CheckHTTP2); c == nil || !c.Pass {
				t.Errorf("%s: http2-calls check %+v", tt.profile, c)
			}
		}
		counts := callsByPod(t, ctx, loadPod.Netns, target, 60)
		t.Logf("%s: calls per replica over one connection: %v", tt.profile, counts)
		if len(counts) != tt.replicas {
			t.Errorf("%s: 60 calls reached %d replicas %v, want %d", tt.profile, len(counts), counts, tt.replicas)
		}
		if err := p.RemoveMesh(ctx); err != nil {
			t.Fatalf("%s: remove: %v", tt.profile, err)
		}
	}
}

func findCheck(checks []mesh.Check, name string) *mesh.Check {
	for i := range checks {
		if checks[i].Name == name {
			return &checks[i]
		}
	}
	return nil
}

// callsByPod makes n sequential gRPC calls over one connection from a
// network namespace and counts the answering pods.
func callsByPod(t *testing.T, ctx context.Context, netns, target string, n int) map[string]int {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return cluster.DialIn(ctx, netns, "tcp", addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	counts := map[string]int{}
	for range n {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out := new(wrapperspb.BytesValue)
		err := cc.Invoke(cctx, grpcapp.Method, &wrapperspb.BytesValue{}, out)
		cancel()
		if err != nil {
			t.Fatalf("call to %s: %v", target, err)
		}
		var answer struct {
			Pod string `json:"pod"`
		}
		if err := json.Unmarshal(out.Value, &answer); err != nil || answer.Pod == "" {
			t.Fatalf("answer names no pod: %v %s", err, out.Value)
		}
		counts[answer.Pod]++
	}
	return counts
}
