package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"

	"github.com/meshbench/meshbench/internal/topology"
)

// result is one downstream call's node of the call tree: the downstream's
// own JSON answer, or an error node made here. status is what the call
// came to: 200, or the status that marks it failed.
type result struct {
	node   []byte
	status int
	buf    *[]byte // pooled buffer behind node, if any
}

func (r result) failed() bool { return r.status/100 != 2 }

// runScript runs the steps in order, stopping after a step with a failed
// call, and returns the calls' nodes in script order with the status this
// service answers: 504 if any call timed out, 502 if any other failed.
func (h *handler) runScript(ctx context.Context) ([]result, int) {
	var out []result
	for _, st := range h.b.Script {
		n := len(out)
		if st.Call != nil {
			out = h.callN(ctx, *st.Call, out)
		} else {
			out = h.parallel(ctx, st.Parallel, out)
		}
		if status := worst(out[n:]); status != http.StatusOK {
			return out, status
		}
	}
	return out, http.StatusOK
}

// worst is the status a set of calls gives the caller.
func worst(rs []result) int {
	status := http.StatusOK
	for _, r := range rs {
		switch {
		case r.status == http.StatusGatewayTimeout:
			return http.StatusGatewayTimeout
		case r.failed():
			status = http.StatusBadGateway
		}
	}
	return status
}

// callN makes a call Count times in sequence, each with its probability,
// stopping at the first failure.
func (h *handler) callN(ctx context.Context, c topology.Call, out []result) []result {
	for range max(c.Count, 1) {
		if c.Probability > 0 && rand.Float64() >= c.Probability {
			continue
		}
		r := h.call(ctx, topology.Edge{Service: c.Service, Protocol: c.Protocol.Or()})
		out = append(out, r)
		if r.failed() {
			break
		}
	}
	return out
}

// parallel runs a group's calls at once and keeps their nodes in the
// group's order.
func (h *handler) parallel(ctx context.Context, group []topology.Call, out []result) []result {
	parts := make([][]result, len(group))
	var wg sync.WaitGroup
	for i, c := range group[1:] {
		wg.Go(func() { parts[i+1] = h.callN(ctx, c, nil) })
	}
	parts[0] = h.callN(ctx, group[0], nil) // this goroutine's stack is grown already
	wg.Wait()
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// call makes one downstream call within the per-call timeout.
func (h *handler) call(ctx context.Context, e topology.Edge) result {
	service := e.Service
	buf := getBuf()
	status, isJSON, body, err := h.down[e].get(ctx, h.timeout, (*buf)[:0])
	*buf = body
	if err != nil {
		putBuf(buf)
		if errors.Is(err, errCallTimeout) {
			return h.errorResult(service, http.StatusGatewayTimeout, fmt.Sprintf("timeout after %s", h.timeout))
		}
		return h.errorResult(service, http.StatusBadGateway, err.Error())
	}
	ok := status/100 == 2
	if isTree(body, ok && isJSON) {
		if ok {
			status = http.StatusOK
		}
		return result{node: body, status: status, buf: buf}
	}
	// Not our JSON: a mesh's own answer, such as a 403 from a policy.
	r := h.errorResult(service, status, "HTTP "+strconv.Itoa(status)+": "+snippet(body))
	if ok {
		r = h.errorResult(service, http.StatusBadGateway, "answer is not a JSON call tree: "+snippet(body))
	}
	putBuf(buf)
	return r
}

func snippet(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
