package xdsrelay

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"
)

const listenerType = "type.googleapis.com/envoy.config.listener.v3.Listener"

// fakeIstiod answers every request that is not an ACK or NACK with the
// sidecar listener, on both stream kinds, and reports the requests it got.
type fakeIstiod struct {
	discovery.UnimplementedAggregatedDiscoveryServiceServer
	listener *anypb.Any
	got      chan string // node ids and NACK messages, as seen by istiod
}

func (f *fakeIstiod) StreamAggregatedResources(s discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	for {
		req, err := s.Recv()
		if err != nil {
			return err
		}
		f.got <- req.GetNode().GetId() + req.GetErrorDetail().GetMessage()
		if req.GetResponseNonce() != "" {
			continue
		}
		if err := s.Send(&discovery.DiscoveryResponse{TypeUrl: listenerType, VersionInfo: "v1", Nonce: "n1", Resources: []*anypb.Any{f.listener}}); err != nil {
			return err
		}
	}
}

func (f *fakeIstiod) DeltaAggregatedResources(s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	for {
		req, err := s.Recv()
		if err != nil {
			return err
		}
		f.got <- req.GetNode().GetId() + req.GetErrorDetail().GetMessage()
		if req.GetResponseNonce() != "" {
			continue
		}
		if err := s.Send(&discovery.DeltaDiscoveryResponse{TypeUrl: listenerType, Nonce: "n1",
			Resources: []*discovery.Resource{{Name: "virtualInbound", Version: "v1", Resource: f.listener}}}); err != nil {
			return err
		}
	}
}

// relayed starts a fake istiod and a relay in front of it, and returns a
// client connection to the relay (as Envoy's).
func relayed(t *testing.T) (*fakeIstiod, *Relay, *grpc.ClientConn) {
	t.Helper()
	dir := t.TempDir()
	f := &fakeIstiod{listener: mustAny(t, sidecarInbound(t)), got: make(chan string, 10)}
	il, err := net.Listen("unix", filepath.Join(dir, "istiod"))
	if err != nil {
		t.Fatal(err)
	}
	is := grpc.NewServer()
	discovery.RegisterAggregatedDiscoveryServiceServer(is, f)
	go is.Serve(il)
	t.Cleanup(is.Stop)

	r, err := New(Options{Istiod: "istiod", Dial: func(ctx context.Context, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(dir, "istiod"))
	}})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := net.Listen("unix", filepath.Join(dir, "relay"))
	if err != nil {
		t.Fatal(err)
	}
	go r.Serve(rl)
	t.Cleanup(r.Stop)

	cc, err := grpc.NewClient("unix://"+filepath.Join(dir, "relay"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return f, r, cc
}

func gotFromIstiod(t *testing.T, f *fakeIstiod, want string) {
	t.Helper()
	select {
	case got := <-f.got:
		if got != want {
			t.Errorf("istiod got %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("istiod got nothing, want %q", want)
	}
}

func checkRelayed(t *testing.T, r *Relay, res *anypb.Any) {
	t.Helper()
	var l listener.Listener
	if err := res.UnmarshalTo(&l); err != nil {
		t.Fatal(err)
	}
	if n := len(l.GetFilterChains()[0].GetFilters()); n != 1 {
		t.Errorf("relayed listener has %d network filters, want the metadata exchange removed", n)
	}
	if c := r.Changes(); len(c) != 5 || c[0].Resource != "virtualInbound" {
		t.Errorf("recorded changes: %v", c)
	}
	if n := r.Responses("sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"); n != 1 {
		t.Errorf("responses relayed to the node: %d", n)
	}
}

func TestRelayStateOfTheWorld(t *testing.T) {
	f, r, cc := relayed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &core.Node{Id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"}
	if err := s.Send(&discovery.DiscoveryRequest{Node: node, TypeUrl: listenerType}); err != nil {
		t.Fatal(err)
	}
	gotFromIstiod(t, f, node.Id)
	resp, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetNonce() != "n1" || resp.GetVersionInfo() != "v1" || len(resp.GetResources()) != 1 {
		t.Fatalf("relayed response: %v", resp)
	}
	checkRelayed(t, r, resp.GetResources()[0])

	// A NACK goes on to istiod, and is recorded against the node.
	if err := s.Send(&discovery.DiscoveryRequest{TypeUrl: listenerType, ResponseNonce: "n1", ErrorDetail: &status.Status{Message: "bad"}}); err != nil {
		t.Fatal(err)
	}
	gotFromIstiod(t, f, "bad")
	if rj := r.Rejections(); len(rj) != 1 || rj[0].Node != node.Id || rj[0].Message != "bad" {
		t.Errorf("rejections: %v", rj)
	}
}

func TestRelayDelta(t *testing.T) {
	f, r, cc := relayed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &core.Node{Id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"}
	if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: listenerType}); err != nil {
		t.Fatal(err)
	}
	gotFromIstiod(t, f, node.Id)
	resp, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetResources()) != 1 || resp.GetResources()[0].GetName() != "virtualInbound" {
		t.Fatalf("relayed response: %v", resp)
	}
	checkRelayed(t, r, resp.GetResources()[0].GetResource())
	if err := s.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: listenerType, ResponseNonce: "n1"}); err != nil {
		t.Fatal(err)
	}
	gotFromIstiod(t, f, "")
	if rj := r.Rejections(); len(rj) != 0 {
		t.Errorf("an ACK recorded as a rejection: %v", rj)
	}
}
