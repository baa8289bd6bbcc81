package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/meshbench/meshbench/internal/topology"
)

// DefaultCallTimeout bounds each downstream call.
const DefaultCallTimeout = 10 * time.Second

// Options say which service of which graph to run, and where.
type Options struct {
	Graph     *topology.Graph
	Service   string
	Version   string // may be empty when the service has one version
	Namespace string // reported in the answer; empty leaves it out
	// Pod names the replica in the answer, so that a client can see how
	// its calls spread over replicas; empty leaves it out.
	Pod string
	// Listen is the address to serve on; default ":<service port>".
	Listen string
	// Upstreams maps a downstream service name to its HOST:PORT; a
	// downstream not listed is called at NAME:PORT, its Kubernetes Service
	// within the namespace.
	Upstreams map[string]string
	// CallTimeout bounds each downstream call; default DefaultCallTimeout.
	CallTimeout time.Duration
	// H2C calls the downstreams the graph calls over http with HTTP/2 with
	// prior knowledge instead of HTTP/1.1 keep-alive; h2c and grpc edges
	// keep their protocol.
	H2C    bool
	Logger *slog.Logger
}

// Run serves one service until ctx ends, then drains in-flight requests for
// up to 5 s.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h, err := newServiceHandler(o)
	if err != nil {
		return err
	}
	listen := o.Listen
	if listen == "" {
		listen = ":" + strconv.Itoa(o.Graph.Service(o.Service).Port)
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer h.closeIdle()
	log.Info("serving", "service", o.Service, "version", h.version, "namespace", o.Namespace, "addr", ln.Addr().String())
	return serve(ctx, ln, h, !mixesHTTP2(o.Graph, o.Service, o.H2C), log)
}

// newServiceHandler resolves the service's behaviour and upstream
// addresses from the options.
func newServiceHandler(o Options) (*handler, error) {
	if o.Graph == nil {
		return nil, errors.New("no graph given")
	}
	b, err := o.Graph.Behavior(o.Service, o.Version)
	if err != nil {
		return nil, err
	}
	calls := o.Graph.Calls(o.Service)
	addrs := make(map[string]string, len(calls))
	for _, c := range calls {
		addrs[c] = net.JoinHostPort(c, strconv.Itoa(o.Graph.Service(c).Port))
	}
	for name, addr := range o.Upstreams {
		if _, ok := addrs[name]; !ok {
			return nil, fmt.Errorf("--upstream %s: service %q does not call %q (it calls %v)", name, o.Service, name, calls)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("--upstream %s=%s: want HOST:PORT: %w", name, addr, err)
		}
		addrs[name] = addr
	}
	timeout := o.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	return newHandler(b, o.Namespace, o.Pod, newDownstreams(o.Graph, o.Service, addrs, newH2CClient(), o.H2C), timeout), nil
}
