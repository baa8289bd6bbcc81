package xdsload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

// Kind is the proxy a client plays.
type Kind string

const (
	// Sidecar subscribes as Envoy does: state-of-the-world ADS for
	// clusters and listeners, then the endpoints and routes they name.
	Sidecar Kind = "sidecar"
	// Ztunnel subscribes as Istio's node proxy does: delta ADS, wildcard,
	// for workload addresses and authorizations.
	Ztunnel Kind = "ztunnel"
	// Waypoint is an ambient mesh's waypoint, an Envoy: it subscribes as
	// Sidecar does; its node (type "waypoint", a waypoint pod's address
	// and labels) is what makes istiod send it a waypoint's configuration.
	Waypoint Kind = "waypoint"
)

// Proxy is one synthetic proxy.
type Proxy struct {
	Kind Kind
	Node Node
}

// Options configure a Fleet.
type Options struct {
	Addr string // the control plane's plaintext xDS address, host:port
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// StreamsPerConn is how many proxies share one HTTP/2 connection
	// (each has a stream of its own); 1 when zero.
	StreamsPerConn int
	// OnResponse, when set, is called for every response after it was
	// ACKed, from the receiving client's goroutine.
	OnResponse func(client int, r *Response, ackedAt time.Time)
	Log        *slog.Logger
}

// Fleet is a set of synthetic proxies connected to one control plane.
type Fleet struct {
	o       Options
	clients []*client
	conns   []*grpc.ClientConn
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Stats is one client's counters.
type Stats struct {
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
	// ConfigBytes is what the client received on its current stream until
	// it first held a full configuration.
	ConfigBytes int64 `json:"config_bytes"`
	// BytesByType is everything received, by resource type, over the
	// client's life.
	BytesByType map[string]int64 `json:"bytes_by_type"`
	Responses   int64            `json:"responses"`
	Reconnects  int              `json:"reconnects"`
	SyncedAt    time.Time        `json:"synced_at"`
}

type client struct {
	i           int
	p           Proxy
	node        []byte
	f           *Fleet
	cc          *grpc.ClientConn
	mu          sync.Mutex
	st          Stats
	streamStart time.Time // when the current stream opened
}

// rawCodec passes messages through as bytes: the clients build and read
// the wire format themselves.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) ([]byte, error) {
	return *(v.(*[]byte)), nil
}
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = slices.Clone(data)
	return nil
}

// NewFleet prepares the clients; Start connects them.
func NewFleet(o Options, proxies []Proxy) (*Fleet, error) {
	if o.StreamsPerConn <= 0 {
		o.StreamsPerConn = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	f := &Fleet{o: o}
	for i, p := range proxies {
		nb, err := p.Node.marshal()
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", p.Node.ID, err)
		}
		if i%o.StreamsPerConn == 0 {
			cc, err := grpc.NewClient("passthrough:///"+o.Addr,
				grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return o.Dial(ctx, "tcp", addr) }),
				grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<24),
				// Reconnect within a second of the control plane's return, as
				// the streams themselves retry, rather than after gRPC's
				// default backoff of up to two minutes.
				grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 5 * time.Second,
					Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second}}),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.ForceCodec(rawCodec{})))
			if err != nil {
				f.Close()
				return nil, err
			}
			f.conns = append(f.conns, cc)
		}
		f.clients = append(f.clients, &client{i: i, p: p, node: nb, f: f, cc: f.conns[len(f.conns)-1],
			st: Stats{Kind: p.Kind, ID: p.Node.ID, BytesByType: map[string]int64{}}})
	}
	return f, nil
}

// Len is the number of clients.
func (f *Fleet) Len() int { return len(f.clients) }

// Start connects every client; each reconnects on its own until Close.
func (f *Fleet) Start(ctx context.Context) {
	ctx, f.cancel = context.WithCancel(ctx)
	for _, c := range f.clients {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			c.run(ctx)
		}()
	}
}

// WaitSyncedSince waits until every client holds a full configuration
// received on a stream it opened at or after since.
func (f *Fleet) WaitSyncedSince(ctx context.Context, since time.Time) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		n := 0
		for _, c := range f.clients {
			c.mu.Lock()
			if !c.st.SyncedAt.IsZero() && !c.streamStart.Before(since) {
				n++
			}
			c.mu.Unlock()
		}
		if n == len(f.clients) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d proxies synced: %w", n, len(f.clients), ctx.Err())
		case <-t.C:
		}
	}
}

// Stats returns every client's counters.
func (f *Fleet) Stats() []Stats {
	out := make([]Stats, len(f.clients))
	for i, c := range f.clients {
		c.mu.Lock()
		out[i] = c.st
		out[i].BytesByType = make(map[string]int64, len(c.st.BytesByType))
		for k, v := range c.st.BytesByType {
			out[i].BytesByType[k] = v
		}
		c.mu.Unlock()
	}
	return out
}

// Close disconnects every client and waits for them.
func (f *Fleet) Close() {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	for _, cc := range f.conns {
		_ = cc.Close()
	}
}

func (c *client) run(ctx context.Context) {
	delay := 100 * time.Millisecond
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			c.mu.Lock()
			c.st.Reconnects++
			c.mu.Unlock()
		}
		start := time.Now()
		err := c.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		c.f.o.Log.Debug("xds stream ended", "proxy", c.p.Node.ID, "err", err)
		if time.Since(start) > 10*time.Second {
			delay = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay + rand.N(delay)):
		}
		delay = min(2*delay, time.Second)
	}
}

// resetStream starts a stream's accounting afresh.
func (c *client) resetStream() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streamStart = time.Now()
	c.st.ConfigBytes = 0
	c.st.SyncedAt = time.Time{}
}

// account counts a response; when synced is true and the stream had not
// synced yet, it marks it synced.
func (c *client) account(r *Response, synced bool, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Responses++
	c.st.BytesByType[r.TypeURL] += int64(r.Size())
	if !c.st.SyncedAt.IsZero() {
		return
	}
	c.st.ConfigBytes += int64(r.Size())
	if synced {
		c.st.SyncedAt = at
	}
}

func (c *client) stream(ctx context.Context) error {
	c.resetStream()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	method := methodSotW
	if c.p.Kind == Ztunnel {
		method = methodDelta
	}
	s, err := c.cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
	if err != nil {
		return err
	}
	send := func(b []byte) error { return s.SendMsg(&b) }
	if c.p.Kind == Ztunnel {
		return c.delta(s, send)
	}
	return c.sotw(s, send)
}

// sotw plays an Envoy sidecar: CDS and LDS, then EDS and RDS for the
// names they reference, ACKing every response.
func (c *client) sotw(s grpc.ClientStream, send func([]byte) error) error {
	if err := send(sotwRequest(c.node, TypeCluster, "", "", nil)); err != nil {
		return err
	}
	if err := send(sotwRequest(nil, TypeListener, "", "", nil)); err != nil {
		return err
	}
	type sub struct {
		names          []string
		version, nonce string
		requested, got bool
	}
	subs := map[string]*sub{TypeCluster: {requested: true}, TypeListener: {requested: true}, TypeEndpoint: {}, TypeRoute: {}}
	// resubscribe asks for a new set of names of a dependent type.
	resubscribe := func(typ string, names []string) error {
		d := subs[typ]
		slices.Sort(names)
		// An empty first request would be a wildcard subscription.
		if d.requested && slices.Equal(d.names, names) || !d.requested && len(names) == 0 {
			return nil
		}
		d.names, d.requested, d.got = names, true, false
		return send(sotwRequest(nil, typ, d.version, d.nonce, names))
	}
	for {
		var raw []byte
		if err := s.RecvMsg(&raw); err != nil {
			return err
		}
		r, err := parseSotW(raw)
		if err != nil {
			return err
		}
		d, ok := subs[r.TypeURL]
		if !ok {
			return fmt.Errorf("response of unrequested type %s", r.TypeURL)
		}
		d.version, d.nonce, d.got = r.Version, r.Nonce, true
		if err := send(sotwRequest(nil, r.TypeURL, r.Version, r.Nonce, d.names)); err != nil {
			return err
		}
		at := time.Now()
		switch r.TypeURL {
		case TypeCluster:
			names, err := edsNames(r.Resources)
			if err != nil {
				return err
			}
			if err := resubscribe(TypeEndpoint, names); err != nil {
				return err
			}
		case TypeListener:
			names, err := rdsNames(r.Resources)
			if err != nil {
				return err
			}
			if err := resubscribe(TypeRoute, names); err != nil {
				return err
			}
		}
		synced := subs[TypeCluster].got && subs[TypeListener].got
		for _, t := range []string{TypeEndpoint, TypeRoute} {
			if d := subs[t]; len(d.names) > 0 && !d.got {
				synced = false
			}
		}
		c.account(r, synced, at)
		if c.f.o.OnResponse != nil {
			c.f.o.OnResponse(c.i, r, at)
		}
	}
}

// delta plays ztunnel: wildcard delta subscriptions to workload
// addresses and authorizations, ACKing every response.
func (c *client) delta(s grpc.ClientStream, send func([]byte) error) error {
	if err := send(deltaRequest(c.node, TypeAddress, "")); err != nil {
		return err
	}
	if err := send(deltaRequest(nil, TypeAuthorization, "")); err != nil {
		return err
	}
	got := map[string]bool{}
	for {
		var raw []byte
		if err := s.RecvMsg(&raw); err != nil {
			return err
		}
		r, err := parseDelta(raw)
		if err != nil {
			return err
		}
		if r.TypeURL != TypeAddress && r.TypeURL != TypeAuthorization {
			return errors.New("response of unrequested type " + r.TypeURL)
		}
		if err := send(deltaRequest(nil, r.TypeURL, r.Nonce)); err != nil {
			return err
		}
		at := time.Now()
		got[r.TypeURL] = true
		c.account(r, got[TypeAddress] && got[TypeAuthorization], at)
		if c.f.o.OnResponse != nil {
			c.f.o.OnResponse(c.i, r, at)
		}
	}
}
