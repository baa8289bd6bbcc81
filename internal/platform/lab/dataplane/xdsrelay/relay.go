package xdsrelay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
)

// maxMessage bounds one xDS message either way; istiod's responses for a
// sidecar that sees every Service grow with the mesh.
const maxMessage = 64 << 20

// Options configure a Relay.
type Options struct {
	// Istiod is istiod's plaintext xDS address (host:15010).
	Istiod string
	// Dial connects to Istiod; nil dials from this network namespace.
	Dial   func(ctx context.Context, addr string) (net.Conn, error)
	Logger *slog.Logger
}

// Rejection is an update a proxy refused: a request carrying an error.
type Rejection struct {
	Node    string `json:"node"`
	TypeURL string `json:"type_url"`
	Message string `json:"message"`
}

// Relay relays aggregated xDS streams between proxies and istiod,
// scrubbing istiod's responses (see Scrub).
type Relay struct {
	conn *grpc.ClientConn
	srv  *grpc.Server
	log  *slog.Logger

	mu         sync.Mutex
	changes    map[Change]bool
	rejections []Rejection    // the first maxRejections
	rejected   int            // every rejection, kept or not
	responses  map[string]int // node -> responses relayed to it
}

// A proxy decides what it sends the relay, rejections included: the
// relay keeps (and logs) the first maxRejections, each message cut at
// maxRejectionMessage bytes, and counts the rest.
const (
	maxRejections       = 64
	maxRejectionMessage = 2 << 10
)

// New connects (lazily) to istiod. Serve the relay on a listener.
func New(o Options) (*Relay, error) {
	if o.Istiod == "" {
		return nil, errors.New("xds relay: no istiod address")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
	}
	if o.Dial != nil {
		dopts = append(dopts, grpc.WithContextDialer(o.Dial))
	}
	conn, err := grpc.NewClient("passthrough:///"+o.Istiod, dopts...)
	if err != nil {
		return nil, fmt.Errorf("xds relay: istiod %s: %w", o.Istiod, err)
	}
	r := &Relay{conn: conn, log: o.Logger, changes: map[Change]bool{}, responses: map[string]int{}}
	r.srv = grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	discovery.RegisterAggregatedDiscoveryServiceServer(r.srv, adsServer{r: r})
	return r, nil
}

// Serve relays the streams proxies open on l until Stop.
func (r *Relay) Serve(l net.Listener) error { return r.srv.Serve(l) }

// Stop ends every stream and closes the connection to istiod.
func (r *Relay) Stop() {
	r.srv.Stop()
	r.conn.Close()
}

// Changes is every distinct change made so far, sorted.
func (r *Relay) Changes() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Change, 0, len(r.changes))
	for c := range r.changes {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Extension, b.Extension), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Action, b.Action),
			cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.Resource, b.Resource))
	})
	return out
}

// Rejections is the first updates proxies refused (at most
// maxRejections of them); Rejected counts them all.
func (r *Relay) Rejections() []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rejections)
}

// Rejected is how many updates proxies refused so far.
func (r *Relay) Rejected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejected
}

// Responses is how many responses from istiod the relay passed to a node.
func (r *Relay) Responses(node string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.responses[node]
}

// nack records a proxy's refusal of an update.
func (r *Relay) nack(node, typeURL, msg string) {
	if msg == "" {
		return
	}
	if len(msg) > maxRejectionMessage {
		msg = msg[:maxRejectionMessage] + "..."
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected++
	if len(r.rejections) < maxRejections {
		r.log.Warn("proxy rejected istiod's update", "node", node, "type", typeURL, "error", msg)
		r.rejections = append(r.rejections, Rejection{Node: node, TypeURL: typeURL, Message: msg})
	}
}

// scrub edits resources in place, recording the changes for node.
func (r *Relay) scrub(node string, resources []**anypb.Any) {
	var all []Change
	for _, res := range resources {
		out, changes, err := Scrub(*res)
		if err != nil {
			// Passed on as istiod sent it: the proxy decides, and a
			// rejection shows in its counters and in Rejections.
			r.log.Warn("xds relay: resource left as istiod sent it", "node", node, "error", err)
			continue
		}
		*res = out
		all = append(all, changes...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses[node]++
	for _, c := range all {
		r.changes[c] = true
	}
}

type adsServer struct {
	discovery.UnimplementedAggregatedDiscoveryServiceServer
	r *Relay
}

// pump runs the two directions of a relayed stream until either ends; a
// proxy closing its side cleanly is not an error, and a stream cancelled
// because its proxy stopped (every Remove does that) is not worth a
// warning.
func (r *Relay) pump(kind string, up, down func() error) error {
	errc := make(chan error, 2)
	go func() { errc <- up() }()
	go func() { errc <- down() }()
	err := <-errc
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled:
		r.log.Debug("xds relay: stream cancelled", "stream", kind)
	default:
		r.log.Warn("xds relay: stream ended", "stream", kind, "error", err)
	}
	return err
}

// request is what the relay reads of a proxy's request, on a stream of
// either kind.
type request interface {
	GetNode() *core.Node
	GetTypeUrl() string
	GetErrorDetail() *rpcstatus.Status
}

// stream is one end of a relayed stream: what the relay receives from it
// and what it sends to it.
type stream[In, Out any] interface {
	Recv() (In, error)
	Send(Out) error
}

// relay runs one proxy's stream, of either kind, against a stream of its
// own to istiod that open opens: the proxy's requests go to istiod as they
// are, a rejection among them recorded, and istiod's responses go back
// with the resources that resources picks out of each scrubbed. kind names
// the stream in the log.
func relay[Req request, Resp any, Up stream[Resp, Req]](r *Relay, kind string,
	proxy interface {
		stream[Req, Resp]
		Context() context.Context
	},
	open func(context.Context, ...grpc.CallOption) (Up, error), resources func(Resp) []**anypb.Any) error {
	ctx, cancel := context.WithCancel(proxy.Context())
	defer cancel()
	istiod, err := open(ctx)
	if err != nil {
		return err
	}
	var node string
	nodeSet := make(chan struct{})
	return r.pump(kind, func() error {
		for first := true; ; first = false {
			req, err := proxy.Recv()
			if err != nil {
				return err
			}
			if first {
				// Envoy names itself on its first request only
				// (set_node_on_first_message_only).
				node = req.GetNode().GetId()
				close(nodeSet)
			}
			r.nack(node, req.GetTypeUrl(), req.GetErrorDetail().GetMessage())
			if err := istiod.Send(req); err != nil {
				return err
			}
		}
	}, func() error {
		for {
			resp, err := istiod.Recv()
			if err != nil {
				return err
			}
			// istiod answers only after the first request.
			select {
			case <-nodeSet:
			case <-ctx.Done():
				return ctx.Err()
			}
			r.scrub(node, resources(resp))
			if err := proxy.Send(resp); err != nil {
				return err
			}
		}
	})
}

func (s adsServer) StreamAggregatedResources(proxy discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return relay(s.r, "state of the world", proxy, discovery.NewAggregatedDiscoveryServiceClient(s.r.conn).StreamAggregatedResources,
		func(resp *discovery.DiscoveryResponse) []**anypb.Any {
			res := make([]**anypb.Any, len(resp.Resources))
			for i := range resp.Resources {
				res[i] = &resp.Resources[i]
			}
			return res
		})
}

func (s adsServer) DeltaAggregatedResources(proxy discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return relay(s.r, "delta", proxy, discovery.NewAggregatedDiscoveryServiceClient(s.r.conn).DeltaAggregatedResources,
		func(resp *discovery.DeltaDiscoveryResponse) []**anypb.Any {
			res := make([]**anypb.Any, 0, len(resp.Resources))
			for _, r := range resp.Resources {
				// A resource named without a body has nothing to scrub.
				if r.Resource != nil {
					res = append(res, &r.Resource)
				}
			}
			return res
		})
}
