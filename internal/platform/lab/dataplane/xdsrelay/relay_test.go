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
	return answer(f, s, &discovery.DiscoveryResponse{TypeUrl: listenerType, VersionInfo: "v1", Nonce: "n1", Resources: []*anypb.Any{f.listener}})
}

func (f *fakeIstiod) DeltaAggregatedResources(s discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return answer(f, s, &discovery.DeltaDiscoveryResponse{TypeUrl: listenerType, Nonce: "n1",
		Resources: []*discovery.Resource{{Name: "virtualInbound", Version: "v1", Resource: f.listener}}})
}

// answer is fakeIstiod on a stream of either kind: resp answers each
// request that is not an ACK or NACK.
func answer[Req interface {
	request
	GetResponseNonce() string
}, Resp any](f *fakeIstiod, s stream[Req, Resp], resp Resp) error {
	for {
		req, err := s.Recv()
		if err != nil {
			return err
		}
		f.got <- req.GetNode().GetId() + req.GetErrorDetail().GetMessage()
		if req.GetResponseNonce() != "" {
			continue
		}
		if err := s.Send(resp); err != nil {
			return err
		}
	}
}

// nodeID is the sidecar the tests' streams speak for.
const nodeID = "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"

// relayed starts a fake istiod and a relay in front of it, and returns a
// client of the relay (as Envoy's) and a context for its streams.
func relayed(t *testing.T) (*fakeIstiod, *Relay, discovery.AggregatedDiscoveryServiceClient, context.Context) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return f, r, discovery.NewAggregatedDiscoveryServiceClient(cc), ctx
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

// send sends a proxy's request through the relay and has istiod get it,
// as got.
func send[Req, Resp any](t *testing.T, f *fakeIstiod, s stream[Resp, Req], req Req, got string) {
	t.Helper()
	if err := s.Send(req); err != nil {
		t.Fatal(err)
	}
	gotFromIstiod(t, f, got)
}

// firstResponse sends the node's first request, for listeners, through
// the relay and returns istiod's answer as the relay passed it on.
func firstResponse[Req, Resp any](t *testing.T, f *fakeIstiod, s stream[Resp, Req], first Req) Resp {
	t.Helper()
	send(t, f, s, first, nodeID)
	resp, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return resp
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
	if n := r.Responses(nodeID); n != 1 {
		t.Errorf("responses relayed to the node: %d", n)
	}
}

func TestRelayStateOfTheWorld(t *testing.T) {
	f, r, ads, ctx := relayed(t)
	s, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp := firstResponse(t, f, s, &discovery.DiscoveryRequest{Node: &core.Node{Id: nodeID}, TypeUrl: listenerType})
	if resp.GetNonce() != "n1" || resp.GetVersionInfo() != "v1" || len(resp.GetResources()) != 1 {
		t.Fatalf("relayed response: %v", resp)
	}
	checkRelayed(t, r, resp.GetResources()[0])

	// A NACK goes on to istiod, and is recorded against the node.
	send(t, f, s, &discovery.DiscoveryRequest{TypeUrl: listenerType, ResponseNonce: "n1", ErrorDetail: &status.Status{Message: "bad"}}, "bad")
	if rj := r.Rejections(); len(rj) != 1 || rj[0].Node != nodeID || rj[0].Message != "bad" {
		t.Errorf("rejections: %v", rj)
	}
}

func TestRelayDelta(t *testing.T) {
	f, r, ads, ctx := relayed(t)
	s, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp := firstResponse(t, f, s, &discovery.DeltaDiscoveryRequest{Node: &core.Node{Id: nodeID}, TypeUrl: listenerType})
	if len(resp.GetResources()) != 1 || resp.GetResources()[0].GetName() != "virtualInbound" {
		t.Fatalf("relayed response: %v", resp)
	}
	checkRelayed(t, r, resp.GetResources()[0].GetResource())
	send(t, f, s, &discovery.DeltaDiscoveryRequest{TypeUrl: listenerType, ResponseNonce: "n1"}, "")
	if rj := r.Rejections(); len(rj) != 0 {
		t.Errorf("an ACK recorded as a rejection: %v", rj)
	}
}
