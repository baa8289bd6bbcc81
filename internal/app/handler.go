package app

import (
	"context"
	"net/http"
	"time"

	"github.com/meshbench/meshbench/internal/topology"
)

// handler runs one version of one service: CPU work, the script of
// downstream calls, the added latency, then the JSON call tree.
type handler struct {
	b       topology.Behavior
	version string
	down    map[topology.Edge]downstream
	timeout time.Duration
	// head is the answer's constant start, `{"service":"x","version":"v1"`.
	head []byte
}

func newHandler(b topology.Behavior, namespace, pod string, down map[topology.Edge]downstream, timeout time.Duration) *handler {
	return &handler{
		b: b, version: b.Version, down: down, timeout: timeout,
		head: renderHead(b.Service, b.Version, namespace, pod),
	}
}

// responder answers requests to the service's own paths: a version's
// handler, or several versions taking turns.
type responder interface {
	// respond runs one request and appends its answer to b.
	respond(ctx context.Context, b []byte) ([]byte, int)
	// mayWait reports whether respond can block: calls or latency.
	mayWait() bool
}

func (h *handler) mayWait() bool { return len(h.b.Script) > 0 || h.b.Latency > 0 }

func (h *handler) respond(ctx context.Context, b []byte) ([]byte, int) {
	start := time.Now()
	if h.b.CPUWork > 0 {
		burnCPU(h.b.CPUWork.D())
	}
	var calls []result
	status := http.StatusOK
	if len(h.b.Script) > 0 {
		calls, status = h.runScript(ctx)
	}
	if h.b.Latency > 0 && status == http.StatusOK {
		sleep(ctx, h.b.Latency.D())
	}
	b = h.render(b, status, time.Since(start), calls)
	releaseResults(calls)
	return b, status
}

// closeIdle closes the idle connections to downstreams.
func (h *handler) closeIdle() {
	for _, d := range h.down {
		d.closeIdle()
	}
}
