package xdsload

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

// Wire helpers for the fake server: the messages a control plane sends.
func msg(fields ...[]byte) []byte { return slices.Concat(fields...) }
func str(num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
}
func sub(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}
func varint(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}
func anyOf(typeURL string, v []byte) []byte { return msg(str(1, typeURL), sub(2, v)) }

// edsCluster is a Cluster of type EDS whose endpoints are named service.
func edsCluster(name, service string) []byte {
	return msg(str(1, name), varint(2, 3), sub(3, str(2, service)))
}

// rdsListener is a Listener with one HTTP connection manager using RDS.
func rdsListener(name, route string) []byte {
	hcm := sub(3, str(2, route))
	filter := msg(str(1, "envoy.filters.network.http_connection_manager"), sub(4, anyOf(typeHCM, hcm)))
	return msg(str(1, name), sub(3, sub(3, filter)))
}

// request is what the fake server decodes from a DiscoveryRequest.
type request struct {
	typeURL, version, nonce string
	names                   []string
	node                    bool
}

func decodeRequest(t *testing.T, b []byte, delta bool) request {
	var r request
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case !delta && num == 1, delta && num == 100:
			r.version = string(v)
		case !delta && num == 2, delta && num == 1:
			r.node = true
		case !delta && num == 3, delta && num == 3:
			r.names = append(r.names, string(v))
		case !delta && num == 4, delta && num == 2:
			r.typeURL = string(v)
		case !delta && num == 5, delta && num == 6:
			r.nonce = string(v)
		}
		return nil
	})
	if err != nil {
		t.Errorf("decode request: %v", err)
	}
	return r
}

// fakeServer answers each first request of a type with resources, and
// records every request.
type fakeServer struct {
	t     *testing.T
	mu    sync.Mutex
	reqs  []request
	delta bool
}

func (f *fakeServer) handle(_ any, s grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(s)
	delta := method == methodDelta
	n := 0
	for {
		var b []byte
		if err := s.RecvMsg(&b); err != nil {
			return nil
		}
		r := decodeRequest(f.t, b, delta)
		f.mu.Lock()
		f.reqs = append(f.reqs, r)
		f.mu.Unlock()
		if r.nonce != "" { // an ACK
			continue
		}
		n++
		nonce := "n" + string(rune('0'+n))
		var resp []byte
		switch r.typeURL {
		case TypeCluster:
			resp = msg(str(1, "v1"), sub(2, anyOf(TypeCluster, edsCluster("outbound|80||a", "outbound|80||a"))),
				sub(2, anyOf(TypeCluster, msg(str(1, "static"), varint(2, 0)))), str(4, TypeCluster), str(5, nonce))
		case TypeListener:
			resp = msg(str(1, "v1"), sub(2, anyOf(TypeListener, rdsListener("0.0.0.0_80", "80"))), str(4, TypeListener), str(5, nonce))
		case TypeEndpoint, TypeRoute:
			resp = msg(str(1, "v1"), str(4, r.typeURL), str(5, nonce))
			for _, name := range r.names {
				resp = append(resp, sub(2, anyOf(r.typeURL, str(1, name)))...)
			}
		case TypeAddress, TypeAuthorization:
			resp = msg(str(1, "v1"), sub(2, msg(str(3, "Kubernetes//Pod/ns/p"), sub(2, anyOf(r.typeURL, str(1, "x"))))),
				str(4, r.typeURL), str(5, nonce), str(6, "Kubernetes//Pod/ns/gone"))
		}
		if err := s.SendMsg(&resp); err != nil {
			return nil
		}
	}
}

func TestClientsSubscribeAndACK(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeServer{t: t}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(fs.handle), grpc.ForceServerCodec(rawCodec{}))
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	var mu sync.Mutex
	var seen []*Response
	f, err := NewFleet(Options{Addr: lis.Addr().String(), StreamsPerConn: 2,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		OnResponse: func(_ int, r *Response, _ time.Time) {
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
		}},
		[]Proxy{
			{Kind: Sidecar, Node: Node{ID: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local", Metadata: map[string]any{"NAMESPACE": "ns"}}},
			{Kind: Ztunnel, Node: Node{ID: "ztunnel~10.0.0.2~z.istio-system~istio-system.svc.cluster.local"}},
			{Kind: Waypoint, Node: Node{ID: "waypoint~10.0.0.3~waypoint-0.ns~ns.svc.cluster.local"}},
		})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f.Start(context.Background())
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitSyncedSince(ctx, start); err != nil {
		t.Fatal(err)
	}
	f.Close()

	fs.mu.Lock()
	defer fs.mu.Unlock()
	var eds, rds []string
	acks := map[string]int{}
	nodes := 0
	for _, r := range fs.reqs {
		if r.node {
			nodes++
		}
		if r.nonce != "" {
			acks[r.typeURL]++
			continue
		}
		switch r.typeURL {
		case TypeEndpoint:
			eds = r.names
		case TypeRoute:
			rds = r.names
		}
	}
	if !slices.Equal(eds, []string{"outbound|80||a"}) || !slices.Equal(rds, []string{"80"}) {
		t.Errorf("subscribed to endpoints %q and routes %q; want the EDS cluster's and the listener's RDS names only", eds, rds)
	}
	// The sidecar and the waypoint subscribe alike; the ztunnel alone
	// takes addresses and authorizations.
	for typ, want := range map[string]int{TypeCluster: 2, TypeListener: 2, TypeEndpoint: 2, TypeRoute: 2, TypeAddress: 1, TypeAuthorization: 1} {
		if acks[typ] != want {
			t.Errorf("%d ACKs of %s, want %d", acks[typ], typ, want)
		}
	}
	if nodes != 3 {
		t.Errorf("the node was sent %d times, want once per stream (3)", nodes)
	}
	st := f.Stats()
	for _, s := range st {
		var sum int64
		for _, b := range s.BytesByType {
			sum += b
		}
		if s.ConfigBytes <= 0 || s.ConfigBytes != sum || s.SyncedAt.IsZero() {
			t.Errorf("%s: config bytes %d, received %d, synced at %v", s.ID, s.ConfigBytes, sum, s.SyncedAt)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var removed bool
	for _, r := range seen {
		if r.TypeURL == TypeAddress {
			removed = slices.Contains(r.Removed, "Kubernetes//Pod/ns/gone") && len(r.Resources) == 1
		}
	}
	if !removed {
		t.Error("the ztunnel client did not decode the delta response's resources and removals")
	}
}
