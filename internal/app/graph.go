package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshbench/meshbench/internal/topology"
)

// GraphOptions say how to run a whole graph in one process, for
// development and tests.
type GraphOptions struct {
	Graph *topology.Graph
	// Listen is the entry's address in the first namespace; each further
	// namespace's entry takes the next port. Port 0 picks free ports.
	Listen string
	// Namespaces is how many isolated copies to run; default 1.
	Namespaces  int
	CallTimeout time.Duration
	H2C         bool
	Logger      *slog.Logger
}

// Endpoint is where one service of one namespace listens.
type Endpoint struct {
	Namespace string
	Service   string
	Addr      string
}

// GraphServer is a graph running on loopback: every service of every
// namespace on its own port, each version of a service served in turn.
type GraphServer struct {
	Endpoints []Endpoint // entries first, one per namespace, then the rest
	graph     *topology.Graph
	handlers  []*handler
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// StartGraph starts every service of the graph and returns once all listen.
func StartGraph(ctx context.Context, o GraphOptions) (*GraphServer, error) {
	g, log := o.Graph, o.Logger
	if g == nil {
		return nil, errors.New("no graph given")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, port, err := splitListen(o.Listen)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	h2c := newH2CClient()
	gs := &GraphServer{graph: g, cancel: cancel}
	var listeners []net.Listener
	fail := func(err error) (*GraphServer, error) {
		cancel()
		for _, ln := range listeners {
			ln.Close()
		}
		gs.wg.Wait()
		return nil, err
	}
	var rest []Endpoint
	for i, ns := range topology.Namespaces(max(o.Namespaces, 1)) {
		// Bind every service first, so that each knows its upstreams' ports.
		lns := map[string]net.Listener{}
		for _, s := range g.Services {
			addr := net.JoinHostPort(host, "0")
			if s.Name == g.Entry && port != 0 {
				addr = net.JoinHostPort(host, strconv.Itoa(port+i))
			}
			ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
			if err != nil {
				return fail(fmt.Errorf("%s %s: listen: %w", ns, s.Name, err))
			}
			listeners = append(listeners, ln)
			lns[s.Name] = ln
			ep := Endpoint{Namespace: ns, Service: s.Name, Addr: ln.Addr().String()}
			if s.Name == g.Entry {
				gs.Endpoints = append(gs.Endpoints, ep)
			} else {
				rest = append(rest, ep)
			}
		}
		for _, s := range g.Services {
			h, hs, err := graphServiceHandler(g, s, ns, lns, h2c, o.H2C, o.CallTimeout)
			if err != nil {
				return fail(err)
			}
			gs.handlers = append(gs.handlers, hs...)
			ln := lns[s.Name]
			gs.wg.Go(func() {
				if err := serve(ctx, ln, h, !mixesHTTP2(g, s.Name, o.H2C), log); err != nil {
					log.Error("serve", "namespace", ns, "service", s.Name, "err", err)
				}
			})
		}
	}
	gs.Endpoints = append(gs.Endpoints, rest...)
	return gs, nil
}

// graphServiceHandler serves every version of a service from one port,
// taking them in turn as a Kubernetes Service spreads over its pods.
func graphServiceHandler(g *topology.Graph, s topology.Service, ns string, lns map[string]net.Listener, h2c *http.Client, forceH2C bool, timeout time.Duration) (responder, []*handler, error) {
	addrs := map[string]string{}
	for _, c := range g.Calls(s.Name) {
		addrs[c] = lns[c].Addr().String()
	}
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	versions := []string{""}
	if len(s.Versions) > 0 {
		versions = versions[:0]
		for _, v := range s.Versions {
			versions = append(versions, v.Name)
		}
	}
	var hs []*handler
	for _, v := range versions {
		b, err := g.Behavior(s.Name, v)
		if err != nil {
			return nil, nil, err
		}
		hs = append(hs, newHandler(b, ns, "", newDownstreams(g, s.Name, addrs, h2c, forceH2C), timeout))
	}
	if len(hs) == 1 {
		return hs[0], hs, nil
	}
	return &roundRobin{hs: hs}, hs, nil
}

// roundRobin hands requests to its handlers in turn.
type roundRobin struct {
	hs   []*handler
	next atomic.Uint64
}

func (r *roundRobin) mayWait() bool {
	for _, h := range r.hs {
		if h.mayWait() {
			return true
		}
	}
	return false
}

func (r *roundRobin) respond(ctx context.Context, b []byte) ([]byte, int) {
	return r.hs[(r.next.Add(1)-1)%uint64(len(r.hs))].respond(ctx, b)
}

// EntryURL is the URL of the entry of namespace ns ("ns-1"...), with the
// graph's entry path.
func (gs *GraphServer) EntryURL(ns string) string {
	for _, ep := range gs.Endpoints {
		if ep.Namespace == ns && ep.Service == gs.graph.Entry {
			return "http://" + ep.Addr + gs.graph.EntryPath
		}
	}
	return ""
}

// Close stops every service and waits for them to drain.
func (gs *GraphServer) Close() {
	// Close the services' own idle connections to each other first: a
	// server waits up to 5 s for a connection that never sent a request.
	for _, h := range gs.handlers {
		h.closeIdle()
	}
	gs.cancel()
	gs.wg.Wait()
}

// ServeGraph runs a graph until ctx ends, writing where each service
// listens to out.
func ServeGraph(ctx context.Context, o GraphOptions, out io.Writer) error {
	gs, err := StartGraph(ctx, o)
	if err != nil {
		return err
	}
	for _, ep := range gs.Endpoints {
		path := "/"
		if ep.Service == o.Graph.Entry {
			path = o.Graph.EntryPath
		}
		fmt.Fprintf(out, "%s\t%s\thttp://%s%s\n", ep.Namespace, ep.Service, ep.Addr, path)
	}
	<-ctx.Done()
	gs.Close()
	return nil
}

func splitListen(listen string) (string, int, error) {
	if listen == "" {
		return "127.0.0.1", 0, nil
	}
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("--listen %q: want HOST:PORT: %w", listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("--listen %q: bad port", listen)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}
