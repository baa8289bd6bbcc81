package dataplane

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshbench/meshbench/internal/grpcapp"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/topology"
)

// protoEdge is a call edge made over one protocol.
type protoEdge struct {
	edge
	protocol topology.Protocol
}

// http2Edges lists, per Service and per HTTP/2 protocol its callers use
// (gRPC, h2c), one calling pod.
func (in *Installation) http2Edges() []protoEdge {
	var out []protoEdge
	for _, e := range in.edges() {
		for _, p := range e.to.Protocols {
			if p.HTTP2() {
				out = append(out, protoEdge{e, p})
			}
		}
	}
	return out
}

// checkHTTP2 makes each HTTP/2 call of the graph from a calling pod, as
// the app makes it (a gRPC call, or an h2c GET), through whatever the
// mesh put on the path, and wants it answered in that protocol.
func (in *Installation) checkHTTP2(ctx context.Context) mesh.Check {
	es := in.http2Edges()
	var mu sync.Mutex
	var bad []string
	parallel(es, func(e protoEdge) {
		target := hostPort(e.to.VIP.String(), e.to.Port)
		dial := func(ctx context.Context, _ string) (net.Conn, error) { return in.c.Dial(ctx, e.from.Netns, target) }
		var err error
		if e.protocol == topology.ProtocolGRPC {
			err = grpcProbe(ctx, dial, target)
		} else {
			err = h2cProbe(ctx, dial, target)
		}
		if err != nil {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s -> %s over %s: %v", e.from.Key(), e.to.Key(), e.protocol, err))
			mu.Unlock()
		}
	})
	return result(CheckHTTP2, len(es), bad, "gRPC and h2c calls answered")
}

// grpcProbe makes the test service's gRPC call on a fresh connection.
func grpcProbe(ctx context.Context, dial func(context.Context, string) (net.Conn, error), authority string) error {
	cc, err := grpc.NewClient("passthrough:///"+authority,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dial))
	if err != nil {
		return err
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return cc.Invoke(ctx, grpcapp.Method, &wrapperspb.BytesValue{}, new(wrapperspb.BytesValue))
}

// h2cProbe sends a GET over HTTP/2 with prior knowledge on a fresh
// connection and wants a 2xx answered over HTTP/2.
func h2cProbe(ctx context.Context, dial func(context.Context, string) (net.Conn, error), authority string) error {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx, "") }}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+authority+"/", nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !ok(resp.StatusCode) {
		return fmt.Errorf("answered %d over %s", resp.StatusCode, resp.Proto)
	}
	return nil
}
